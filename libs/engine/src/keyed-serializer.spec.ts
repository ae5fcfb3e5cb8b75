import { KeyedSerializer } from './keyed-serializer';

describe('keyed serializer', () => {
  it('runs work of one key in submission order, even when earlier work is slower', async () => {
    const s = new KeyedSerializer();
    const done: string[] = [];
    const slow = s.run('t1', async () => {
      await new Promise((r) => setTimeout(r, 30));
      done.push('first');
    });
    const fast = s.run('t1', async () => {
      done.push('second');
    });
    await Promise.all([slow, fast]);
    expect(done).toEqual(['first', 'second']);
  });

  it('does not hold other keys up, and a failure does not block the key', async () => {
    const s = new KeyedSerializer();
    const done: string[] = [];
    const blocked = s.run(
      't1',
      () =>
        new Promise<void>((r) =>
          setTimeout(() => {
            done.push('t1');
            r();
          }, 30),
        ),
    );
    await s.run('t2', async () => done.push('t2'));
    expect(done).toEqual(['t2']);
    await blocked;
    await expect(s.run('t3', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(s.run('t3', async () => 'ok')).resolves.toBe('ok');
  });
});
