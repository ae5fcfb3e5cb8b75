import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { OutboxMessage, OutboxStore, PendingOutboxMessage } from '@ratchet/domain';
import { makeMessages } from './fixtures';

export interface OutboxStoreFixture {
  /** Must start empty: the suite counts every row. */
  outbox: OutboxStore;
  /** A transaction of the store that owns this outbox (a ThreadStore or a service transaction). */
  transaction<T>(work: (tx: { enqueue(messages: OutboxMessage[]): Promise<void> }) => Promise<T>): Promise<T>;
  close?(): Promise<void>;
}

const enqueueCommitted = (f: OutboxStoreFixture, messages: OutboxMessage[]) =>
  f.transaction((tx) => tx.enqueue(messages));

/** What every OutboxStore must do; run against each adapter. `make` is called before every test. */
export function outboxStoreContract(name: string, make: () => Promise<OutboxStoreFixture>): void {
  describe(`OutboxStore contract: ${name}`, () => {
    let f: OutboxStoreFixture;
    beforeEach(async () => {
      f = await make();
    });
    afterEach(async () => {
      await f.close?.();
    });

    it('relays committed messages oldest first, marks them sent and reports lag', async () => {
      expect(await f.outbox.lag()).toEqual({ unsent: 0, oldestCreatedAt: null });
      const first = makeMessages(2);
      const second = makeMessages(1);
      const before = Date.now();
      await enqueueCommitted(f, first);
      await enqueueCommitted(f, second);
      const lag = await f.outbox.lag();
      expect(lag.unsent).toBe(3);
      expect(lag.oldestCreatedAt).toBeInstanceOf(Date);
      expect(Math.abs(lag.oldestCreatedAt!.getTime() - before)).toBeLessThan(60_000);

      const published: PendingOutboxMessage[] = [];
      expect(await f.outbox.relayBatch(10, async (m) => void published.push(m))).toBe(3);
      expect(published.map((m) => m.id)).toEqual([...first, ...second].map((m) => m.id));
      const [m0] = published;
      expect({ id: m0!.id, subject: m0!.subject, headers: m0!.headers, payload: m0!.payload }).toEqual(first[0]);
      expect(m0!.attempts).toBe(0);
      expect(m0!.createdAt).toBeInstanceOf(Date);

      expect(await f.outbox.lag()).toEqual({ unsent: 0, oldestCreatedAt: null });
      expect(await f.outbox.relayBatch(10, async (m) => void published.push(m))).toBe(0);
      expect(published).toHaveLength(3);
    });

    it('never relays what a rolled-back transaction enqueued', async () => {
      await expect(
        f.transaction(async (tx) => {
          await tx.enqueue(makeMessages(2));
          throw new Error('rollback');
        }),
      ).rejects.toThrow('rollback');
      const published: string[] = [];
      expect(await f.outbox.relayBatch(10, async (m) => void published.push(m.id))).toBe(0);
      expect(published).toEqual([]);
      expect((await f.outbox.lag()).unsent).toBe(0);
    });

    it('keeps a message whose publish failed unsent, counting the attempt', async () => {
      const [bad, good] = makeMessages(2);
      await enqueueCommitted(f, [bad!, good!]);
      const sent = await f.outbox.relayBatch(10, async (m) => {
        if (m.id === bad!.id) throw new Error('bus down');
      });
      expect(sent).toBe(1);
      expect((await f.outbox.lag()).unsent).toBe(1);
      const retried: PendingOutboxMessage[] = [];
      expect(await f.outbox.relayBatch(10, async (m) => void retried.push(m))).toBe(1);
      expect(retried.map((m) => [m.id, m.attempts])).toEqual([[bad!.id, 1]]);
      expect((await f.outbox.lag()).unsent).toBe(0);
    });

    it('markSent marks rows published straight after their commit; relays skip rows younger than minAgeMs', async () => {
      const [published, young] = [makeMessages(2), makeMessages(1)];
      await enqueueCommitted(f, published);
      await enqueueCommitted(f, young);
      await f.outbox.markSent(published.map((m) => m.id));
      await f.outbox.markSent([]);
      expect((await f.outbox.lag()).unsent).toBe(1);
      const relayed: PendingOutboxMessage[] = [];
      const publish = async (m: PendingOutboxMessage) => void relayed.push(m);
      expect(await f.outbox.relayBatch(10, publish, undefined, 60_000)).toBe(0);
      expect(await f.outbox.relayBatch(10, publish, undefined, 0)).toBe(1);
      expect(relayed.map((m) => m.id)).toEqual(young.map((m) => m.id));
      // Marking again (a late mark after the sweeper relayed the row) counts no second attempt.
      await f.outbox.markSent(young.map((m) => m.id));
      expect((await f.outbox.lag()).unsent).toBe(0);
    });

    it('relays a row held back to a later time as soon as it is due, however young (no handler publishes it)', async () => {
      const [delayed, young] = [makeMessages(1), makeMessages(1)];
      await enqueueCommitted(
        f,
        delayed.map((m) => ({ ...m, notBefore: new Date(Date.now() + 30).toISOString() })),
      );
      await enqueueCommitted(f, young);
      const relayed: PendingOutboxMessage[] = [];
      const publish = async (m: PendingOutboxMessage) => void relayed.push(m);
      expect(await f.outbox.relayBatch(10, publish, undefined, 60_000)).toBe(0);
      await sleep(60);
      expect(await f.outbox.relayBatch(10, publish, undefined, 60_000)).toBe(1);
      expect(relayed.map((m) => m.id)).toEqual(delayed.map((m) => m.id));
    });

    it('leaves a leased row to its process while the lease runs, and relays it flagged once it ran out', async () => {
      const [held, expiring, plain] = [makeMessages(1), makeMessages(1), makeMessages(1)];
      await enqueueCommitted(f, [
        ...held.map((m) => ({ ...m, leaseMs: 60_000, leasedBy: 'process-1' })),
        ...expiring.map((m) => ({ ...m, leaseMs: 1, leasedBy: 'process-1' })),
      ]);
      await enqueueCommitted(f, plain);
      await sleep(20);
      const relayed: PendingOutboxMessage[] = [];
      const publish = async (m: PendingOutboxMessage) => void relayed.push(m);
      expect(await f.outbox.relayBatch(10, publish)).toBe(2);
      expect(relayed.map((m) => [m.id, m.leaseExpired ?? false])).toEqual([
        [expiring[0]!.id, true],
        [plain[0]!.id, false],
      ]);
      expect((await f.outbox.lag()).unsent).toBe(1);
      // An explicit flush of its id (the committing process publishing it itself) ignores the lease.
      expect(await f.outbox.relayBatch(10, publish, [held[0]!.id])).toBe(1);
      expect(relayed.at(-1)).toMatchObject({ id: held[0]!.id });
      expect(relayed.at(-1)?.leaseExpired).toBeUndefined();
      expect((await f.outbox.lag()).unsent).toBe(0);
    });

    it('leaves a delayed row alone until it is due, and relays it then as a first delivery', async () => {
      const [later, due] = [makeMessages(1), makeMessages(1)];
      await enqueueCommitted(f, [
        ...later.map((m) => ({ ...m, notBefore: new Date(Date.now() + 60_000).toISOString() })),
        ...due.map((m) => ({ ...m, notBefore: new Date(Date.now() + 5).toISOString() })),
      ]);
      await sleep(30);
      const relayed: PendingOutboxMessage[] = [];
      expect(await f.outbox.relayBatch(10, async (m) => void relayed.push(m))).toBe(1);
      expect(relayed.map((m) => [m.id, m.leaseExpired ?? false])).toEqual([[due[0]!.id, false]]);
      expect((await f.outbox.lag()).unsent).toBe(1);
    });

    it('releases a lease to the bus: only its holder can, and the row is then relayed as a first delivery', async () => {
      const [released] = makeMessages(1);
      await enqueueCommitted(f, [{ ...released!, leaseMs: 60_000, leasedBy: 'process-1' }]);
      const relayed: PendingOutboxMessage[] = [];
      const publish = async (m: PendingOutboxMessage) => void relayed.push(m);
      await f.outbox.releaseLease(released!.id, 'process-2');
      expect(await f.outbox.relayBatch(10, publish)).toBe(0);
      await f.outbox.releaseLease(released!.id, 'process-1');
      expect(await f.outbox.relayBatch(10, publish)).toBe(1);
      expect(relayed[0]?.leaseExpired).toBeUndefined();
    });

    it('renews a lease; a row marked done is never relayed, renewed or not', async () => {
      const [renewed, done] = [makeMessages(1), makeMessages(1)];
      await enqueueCommitted(
        f,
        [...renewed, ...done].map((m) => ({ ...m, leaseMs: 1, leasedBy: 'process-1' })),
      );
      await f.outbox.renewLease(renewed[0]!.id, 60_000);
      await f.outbox.markSent([done[0]!.id]);
      await f.outbox.renewLease(done[0]!.id, 1);
      await sleep(20);
      const relayed: string[] = [];
      expect(await f.outbox.relayBatch(10, async (m) => void relayed.push(m.id))).toBe(0);
      expect(relayed).toEqual([]);
      expect((await f.outbox.lag()).unsent).toBe(1);
    });

    it('respects the limit and the id filter', async () => {
      const messages = makeMessages(5);
      await enqueueCommitted(f, messages);
      const published: string[] = [];
      const publish = async (m: PendingOutboxMessage) => void published.push(m.id);
      expect(await f.outbox.relayBatch(2, publish)).toBe(2);
      expect(published).toEqual(messages.slice(0, 2).map((m) => m.id));
      expect(await f.outbox.relayBatch(10, publish, [messages[4]!.id, messages[0]!.id])).toBe(1);
      expect(published[2]).toBe(messages[4]!.id);
      expect(await f.outbox.relayBatch(10, publish, [])).toBe(0);
      expect((await f.outbox.lag()).unsent).toBe(2);
    });

    it('never publishes a row twice when two relays run at once', async () => {
      const messages = makeMessages(24);
      await enqueueCommitted(f, messages);
      const published: string[] = [];
      const slowPublish = async (m: PendingOutboxMessage) => {
        published.push(m.id);
        await new Promise((resolve) => setTimeout(resolve, 3));
      };
      const relayUntilEmpty = async () => {
        while ((await f.outbox.relayBatch(4, slowPublish)) > 0) {
          /* keep draining */
        }
      };
      await Promise.all([relayUntilEmpty(), relayUntilEmpty()]);
      expect(published).toHaveLength(messages.length);
      expect(new Set(published)).toEqual(new Set(messages.map((m) => m.id)));
      expect((await f.outbox.lag()).unsent).toBe(0);
    });

    it('prunes sent rows older than the cutoff and never unsent ones', async () => {
      const [a, b] = makeMessages(2);
      await enqueueCommitted(f, [a!, b!]);
      await f.outbox.relayBatch(10, async () => undefined, [a!.id]);
      expect(await f.outbox.prune(new Date(Date.now() - 60_000))).toBe(0);
      expect(await f.outbox.prune(new Date(Date.now() + 60_000))).toBe(1);
      expect((await f.outbox.lag()).unsent).toBe(1);
      const left: string[] = [];
      await f.outbox.relayBatch(10, async (m) => void left.push(m.id));
      expect(left).toEqual([b!.id]);
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
