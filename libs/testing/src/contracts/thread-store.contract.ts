import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ConcurrencyError, type OutboxStore, type ThreadStore } from '@ratchet/domain';
import { barrier, makeEvents, makeMessages, newThreadRef, type ContractState } from './fixtures';
import { threadAdmissionClaimCases } from './thread-admission-claims.contract';
import { threadClaimCases } from './thread-claims.contract';
import { run, state } from './thread-store.rows';

export interface ThreadStoreFixture {
  store: ThreadStore<ContractState>;
  /** The store's own outbox (starts empty): what its transactions enqueue and mark. */
  outbox: OutboxStore;
  close?(): Promise<void>;
}

/** What every ThreadStore must do; run against each adapter. `make` is called before every test. */
export function threadStoreContract(name: string, make: () => Promise<ThreadStoreFixture>): void {
  describe(`ThreadStore contract: ${name}`, () => {
    let fixture: ThreadStoreFixture;
    let store: ThreadStore<ContractState>;
    beforeEach(async () => {
      fixture = await make();
      store = fixture.store;
    });
    afterEach(async () => {
      await fixture.close?.();
    });

    it('appends and reads events back in version order, unchanged', async () => {
      const ref = newThreadRef();
      const events = makeEvents(ref, 1, 3);
      await store.transaction((tx) => tx.appendEvents(ref.tenantId, ref.threadId, 0, events));
      expect(await store.readEvents(ref.tenantId, ref.threadId)).toEqual(events);
      expect(await store.readEvents(ref.tenantId, ref.threadId, 1)).toEqual(events.slice(1));
      expect(await store.transaction((tx) => tx.loadEvents(ref.tenantId, ref.threadId, 2))).toEqual(events.slice(2));
      expect(await store.readEvents(ref.tenantId, 'other-thread')).toEqual([]);
    });

    it('continues a log across transactions and sees its own writes inside one', async () => {
      const ref = newThreadRef();
      const first = makeEvents(ref, 1, 2);
      const second = makeEvents(ref, 3, 2);
      await store.transaction((tx) => tx.appendEvents(ref.tenantId, ref.threadId, 0, first));
      const seen = await store.transaction(async (tx) => {
        await tx.appendEvents(ref.tenantId, ref.threadId, 2, second);
        return tx.loadEvents(ref.tenantId, ref.threadId, 0);
      });
      expect(seen.map((e) => e.version)).toEqual([1, 2, 3, 4]);
      expect((await store.readEvents(ref.tenantId, ref.threadId)).map((e) => e.id)).toEqual(
        [...first, ...second].map((e) => e.id),
      );
    });

    it('keeps threads of different tenants apart', async () => {
      const a = newThreadRef();
      const b = { tenantId: `${a.tenantId}-b`, threadId: a.threadId };
      await store.transaction((tx) => tx.appendEvents(a.tenantId, a.threadId, 0, makeEvents(a, 1, 1)));
      await store.transaction((tx) => tx.appendEvents(b.tenantId, b.threadId, 0, makeEvents(b, 1, 2)));
      expect(await store.readEvents(a.tenantId, a.threadId)).toHaveLength(1);
      expect(await store.readEvents(b.tenantId, b.threadId)).toHaveLength(2);
    });

    it('rejects a batch with a gap or that does not start right after expectedVersion, storing nothing', async () => {
      const ref = newThreadRef();
      const [e1, e2, e3] = makeEvents(ref, 1, 3);
      await expect(
        store.transaction((tx) => tx.appendEvents(ref.tenantId, ref.threadId, 0, [e1!, e3!])),
      ).rejects.toThrow(/version/);
      await expect(store.transaction((tx) => tx.appendEvents(ref.tenantId, ref.threadId, 0, [e2!]))).rejects.toThrow(
        /version/,
      );
      // expectedVersion ahead of the log: contiguous batch, but a gap before it.
      await expect(
        store.transaction((tx) => tx.appendEvents(ref.tenantId, ref.threadId, 1, [e2!, e3!])),
      ).rejects.toThrow(/version 1/);
      expect(await store.readEvents(ref.tenantId, ref.threadId)).toEqual([]);
    });

    it('a gap in one thread of a transaction stores nothing of any thread', async () => {
      const [ok, gapped] = [newThreadRef(), newThreadRef()];
      await expect(
        store.transaction(async (tx) => {
          await tx.appendEvents(ok.tenantId, ok.threadId, 0, makeEvents(ok, 1, 2));
          await tx.appendEvents(gapped.tenantId, gapped.threadId, 3, makeEvents(gapped, 4, 1));
        }),
      ).rejects.toThrow(new RegExp(`thread ${gapped.threadId}: .*version 3`));
      expect(await store.readEvents(ok.tenantId, ok.threadId)).toEqual([]);
      expect(await store.readEvents(gapped.tenantId, gapped.threadId)).toEqual([]);
    });

    it('throws ConcurrencyError when appending on a stale version', async () => {
      const ref = newThreadRef();
      await store.transaction((tx) => tx.appendEvents(ref.tenantId, ref.threadId, 0, makeEvents(ref, 1, 2)));
      const stale = makeEvents(ref, 2, 1);
      const error = await store
        .transaction((tx) => tx.appendEvents(ref.tenantId, ref.threadId, 1, stale))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConcurrencyError);
      expect((error as ConcurrencyError).threadId).toBe(ref.threadId);
      expect((error as ConcurrencyError).expectedVersion).toBe(1);
      expect((await store.readEvents(ref.tenantId, ref.threadId)).map((e) => e.id)).not.toContain(stale[0]!.id);
    });

    it('lets exactly one of two racing transactions append the same version', async () => {
      const ref = newThreadRef();
      await store.transaction((tx) => tx.appendEvents(ref.tenantId, ref.threadId, 0, makeEvents(ref, 1, 1)));
      const bothRead = barrier(2);
      const contender = (label: string) =>
        store.transaction(async (tx) => {
          const events = await tx.loadEvents(ref.tenantId, ref.threadId, 0);
          const version = events[events.length - 1]!.version;
          await bothRead(); // both have read version 1 before either appends
          const next = makeEvents(ref, version + 1, 1);
          await tx.appendEvents(ref.tenantId, ref.threadId, version, next);
          await tx.saveProjection({ ...ref, version: version + 1, state: { ...state(2), note: label } }, []);
          return next[0]!.id;
        });
      const results = await Promise.allSettled([contender('a'), contender('b')]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
      const log = await store.readEvents(ref.tenantId, ref.threadId);
      expect(log.map((e) => e.version)).toEqual([1, 2]);
      expect(log[1]!.id).toBe((won[0] as PromiseFulfilledResult<string>).value);
      expect((await store.readProjection(ref.tenantId, ref.threadId))?.version).toBe(2);
    });

    it('marks outbox rows sent with the writes of a transaction that commits, and not with one that fails', async () => {
      const ref = newThreadRef();
      const [first, second] = makeMessages(2);
      await store.transaction(async (tx) => {
        await tx.appendEvents(ref.tenantId, ref.threadId, 0, makeEvents(ref, 1, 1));
        await tx.enqueue([first!, second!]);
      });
      expect((await fixture.outbox.lag()).unsent).toBe(2);
      await expect(
        store.transaction(async (tx) => {
          await tx.appendEvents(ref.tenantId, ref.threadId, 1, makeEvents(ref, 2, 2));
          tx.markSent([first!.id, second!.id]);
          throw new Error('handler failed');
        }),
      ).rejects.toThrow('handler failed');
      expect((await fixture.outbox.lag()).unsent).toBe(2);
      await store.transaction(async (tx) => {
        tx.markSent([first!.id]);
        // A read after the marks does not send them on their own: they go with the writes.
        expect(await tx.loadProjection(ref.tenantId, ref.threadId)).toBeUndefined();
        await tx.appendEvents(ref.tenantId, ref.threadId, 1, makeEvents(ref, 2, 2));
      });
      expect((await fixture.outbox.lag()).unsent).toBe(1);
      // Marks are never dropped, even by a transaction that ends up writing nothing else.
      await store.transaction(async (tx) => {
        tx.markSent([second!.id]);
      });
      expect((await fixture.outbox.lag()).unsent).toBe(0);
    });

    it('rolls back everything a failed transaction wrote', async () => {
      const ref = newThreadRef();
      const boom = new Error('handler failed');
      await expect(
        store.transaction(async (tx) => {
          expect(await tx.claimInbox('consumer-a', `m-${ref.threadId}`)).toBe(true);
          await tx.appendEvents(ref.tenantId, ref.threadId, 0, makeEvents(ref, 1, 2));
          await tx.saveProjection({ ...ref, version: 2, state: state(2) }, [run(ref)]);
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await store.readEvents(ref.tenantId, ref.threadId)).toEqual([]);
      expect(await store.readProjection(ref.tenantId, ref.threadId)).toBeUndefined();
      // The claim went with the rollback: the redelivered message is processed.
      expect(await store.transaction((tx) => tx.claimInbox('consumer-a', `m-${ref.threadId}`))).toBe(true);
    });

    it('saves and replaces the projection', async () => {
      const ref = newThreadRef();
      expect(await store.readProjection(ref.tenantId, ref.threadId)).toBeUndefined();
      await store.transaction(async (tx) => {
        await tx.appendEvents(ref.tenantId, ref.threadId, 0, makeEvents(ref, 1, 2));
        await tx.saveProjection({ ...ref, version: 2, state: state(2, 'running') }, [run(ref)]);
      });
      expect(await store.readProjection(ref.tenantId, ref.threadId)).toEqual({
        ...ref,
        version: 2,
        state: state(2, 'running'),
      });
      await store.transaction(async (tx) => {
        expect((await tx.loadProjection(ref.tenantId, ref.threadId))?.state.count).toBe(2);
        await tx.appendEvents(ref.tenantId, ref.threadId, 2, makeEvents(ref, 3, 1));
        await tx.saveProjection({ ...ref, version: 3, state: state(3) }, [
          run(ref, { status: 'completed', steps: 1, endedAt: '2026-11-30T12:01:00.000Z', version: 3 }),
        ]);
      });
      expect(await store.readProjection(ref.tenantId, ref.threadId)).toEqual({ ...ref, version: 3, state: state(3) });
    });

    it('appends the conversation with the events, loads its first n messages, and rewrites it whole', async () => {
      const ref = newThreadRef();
      const m = (content: string) => ({ role: 'user' as const, content });
      await store.transaction(async (tx) => {
        await tx.appendEvents(ref.tenantId, ref.threadId, 0, makeEvents(ref, 1, 2));
        await tx.saveProjection({ ...ref, version: 2, state: state(2) }, [], { from: 1, messages: [m('a'), m('b')] });
      });
      await store.transaction(async (tx) => {
        expect(await tx.loadMessages(ref.tenantId, ref.threadId, 2)).toEqual([m('a'), m('b')]);
        expect(await tx.loadMessages(ref.tenantId, ref.threadId, 1)).toEqual([m('a')]);
        expect(await tx.loadMessages(ref.tenantId, ref.threadId, 0)).toEqual([]);
        // More than is stored: the projection is behind the log, which must not reach a model.
        await expect(tx.loadMessages(ref.tenantId, ref.threadId, 3)).rejects.toThrow(/3 messages expected/);
      });
      await store.transaction(async (tx) => {
        await tx.appendEvents(ref.tenantId, ref.threadId, 2, makeEvents(ref, 3, 1));
        await tx.saveProjection({ ...ref, version: 3, state: state(3) }, [], { from: 3, messages: [m('c')] });
      });
      expect(await store.readMessages(ref.tenantId, ref.threadId)).toEqual([m('a'), m('b'), m('c')]);
      // A message number taken already is a conflict, like an event version; nothing of it is stored.
      await expect(
        store.transaction(async (tx) => {
          await tx.appendEvents(ref.tenantId, ref.threadId, 3, makeEvents(ref, 4, 1));
          await tx.saveProjection({ ...ref, version: 4, state: state(4) }, [], { from: 3, messages: [m('x')] });
        }),
      ).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await store.readEvents(ref.tenantId, ref.threadId)).toHaveLength(3);
      // A rebuild writes the whole conversation: rows overwritten, rows past its end removed.
      await store.transaction((tx) =>
        tx.saveProjection({ ...ref, version: 3, state: state(3) }, [], { from: 1, messages: [m('A')], whole: true }),
      );
      expect(await store.readMessages(ref.tenantId, ref.threadId)).toEqual([m('A')]);
      expect(await store.readMessages(ref.tenantId, 'other-thread')).toEqual([]);
    });

    it("finds the tenant's run that has a request id, on any thread, with its digest and outcome", async () => {
      const ref = newThreadRef();
      const requestId = `req-${ref.threadId}`;
      const runId = `run-${ref.threadId}`;
      await store.transaction(async (tx) => {
        await tx.appendEvents(ref.tenantId, ref.threadId, 0, makeEvents(ref, 1, 2));
        await tx.saveProjection({ ...ref, version: 2, state: state(2) }, [run(ref, { runId, requestId })]);
      });
      const find = (tenantId: string, id: string) => store.transaction((tx) => tx.findRequest(tenantId, id));
      expect(await find(ref.tenantId, requestId)).toEqual({
        runId,
        threadId: ref.threadId,
        requestDigest: 'sha256:req-1',
        outcome: null,
      });
      expect(await find(ref.tenantId, 'req-never-sent')).toBeUndefined();
      // Request ids are the tenant's: another tenant's id is unknown here.
      expect(await find(`other-${ref.tenantId}`, requestId)).toBeUndefined();
      // Once the run ends, its outcome is what a resend is answered with.
      const outcome = { status: 'completed' as const, output: 'done' };
      await store.transaction(async (tx) => {
        await tx.appendEvents(ref.tenantId, ref.threadId, 2, makeEvents(ref, 3, 1));
        await tx.saveProjection({ ...ref, version: 3, state: state(3) }, [
          run(ref, { runId, requestId, status: 'completed', endedAt: '2026-11-30T12:01:00.000Z', version: 3, outcome }),
        ]);
      });
      expect(await find(ref.tenantId, requestId)).toMatchObject({ runId, outcome });
    });

    threadClaimCases(() => fixture);
    threadAdmissionClaimCases(() => fixture);
  });
}
