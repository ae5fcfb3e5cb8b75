/**
 * Runs work for one key (a thread) one at a time, in the order it was submitted. The transport hands
 * messages over in stream order; without this, two requests for one thread could be decided in either
 * order (and would fight over the thread's version). Other threads are not held up.
 */
export class KeyedSerializer {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}
