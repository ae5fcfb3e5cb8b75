/**
 * Locks by key for the in-memory stores, as Postgres's transaction-scoped advisory locks: `acquire` waits
 * for whoever holds the key, then holds it until the returned release is called. Not re-entrant.
 */
export class KeyedLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async acquire(key: string): Promise<() => void> {
    const before = this.tails.get(key) ?? Promise.resolve();
    let open!: () => void;
    const mine = new Promise<void>((resolve) => (open = resolve));
    const tail = before.then(() => mine);
    this.tails.set(key, tail);
    await before;
    return () => {
      open();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}
