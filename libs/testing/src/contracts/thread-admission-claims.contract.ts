import { expect, it } from '@jest/globals';
import type { RunRow } from '@ratchet/domain';
import { makeEvents, newThreadRef } from './fixtures';
import { run, state } from './thread-store.rows';
import type { ThreadStoreFixture } from './thread-store.contract';

/**
 * The ThreadStore contract's cases for what a claim counts for an admission (ADR 0045): the tenant's runs in
 * flight and waiting, each concurrency key's runs, each throttle's starts and each debounce key's latest
 * request — and the lock that makes each exact. Called inside the contract's describe.
 */
export function threadAdmissionClaimCases(current: () => ThreadStoreFixture): void {
  it("decides a tenant's run requests under a bound one transaction at a time: the second counts the first's run once it committed", async () => {
    const a = newThreadRef();
    const claim = (id: string) => ({
      consumer: 'c',
      messageId: `${id}-${a.threadId}`,
      tenantId: a.tenantId,
      threadId: `${a.threadId}-${id}`,
      requestId: `req-${id}`,
      activeRunsUpTo: 5,
    });
    let firstClaimed!: () => void;
    const claimedFirst = new Promise<void>((resolve) => (firstClaimed = resolve));
    let finishFirst!: () => void;
    const firstMayCommit = new Promise<void>((resolve) => (finishFirst = resolve));
    const first = current().store.transaction(async (tx) => {
      const [loaded] = await tx.claimAndLoadMany([claim('m1')]);
      firstClaimed();
      await firstMayCommit;
      // The run it admitted, written with the decision.
      const ref = { tenantId: a.tenantId, threadId: `${a.threadId}-m1` };
      await tx.appendEvents(ref.tenantId, ref.threadId, 0, makeEvents(ref, 1, 1));
      await tx.saveProjection({ ...ref, version: 1, state: state(1) }, [
        run(ref, { runId: 'r-m1', requestId: 'req-m1' }),
      ]);
      return loaded!.activeRuns;
    });
    await claimedFirst;
    let secondCounted: number | undefined;
    const second = current().store.transaction(async (tx) => {
      const [loaded] = await tx.claimAndLoadMany([claim('m2')]);
      secondCounted = loaded!.activeRuns;
      return secondCounted;
    });
    // The second waits for the first; another tenant's claim does not.
    await new Promise((r) => setTimeout(r, 100));
    expect(secondCounted).toBeUndefined();
    const other = newThreadRef();
    const [unbound] = await current().store.transaction((tx) =>
      tx.claimAndLoadMany([{ ...claim('m3'), tenantId: other.tenantId, threadId: other.threadId }]),
    );
    expect(unbound!.activeRuns).toBe(0);
    finishFirst();
    expect(await first).toBe(0);
    expect(await second).toBe(1);
  });

  it("counts the tenant's runs in flight and its waiting runs apart, for a claim that asks, up to the bound it names", async () => {
    const a = newThreadRef();
    const b = { tenantId: a.tenantId, threadId: `${a.threadId}-b` };
    const other = newThreadRef();
    await current().store.transaction(async (tx) => {
      await tx.appendEvents(a.tenantId, a.threadId, 0, makeEvents(a, 1, 1));
      await tx.saveProjection({ ...a, version: 1, state: state(1) }, [
        run(a, { runId: 'r-running', requestId: 'q1', status: 'running' }),
        run(a, { runId: 'r-queued', requestId: 'q2', status: 'queued' }),
        run(a, { runId: 'r-done', requestId: 'q3', status: 'completed' }),
      ]);
      await tx.appendEvents(b.tenantId, b.threadId, 0, makeEvents(b, 1, 1));
      await tx.saveProjection({ ...b, version: 1, state: state(1) }, [
        run(b, { runId: 'r-b', requestId: 'q4', status: 'running' }),
        run(b, { runId: 'r-failed', requestId: 'q5', status: 'failed' }),
        run(b, { runId: 'r-cancelled', requestId: 'q6', status: 'cancelled' }),
        // Running, but waiting for a human: not in flight, counted as waiting.
        run(b, {
          runId: 'r-waits',
          requestId: 'q7',
          status: 'running',
          waiting: { on: 'approval', since: '2026-12-01T10:00:00.000Z', until: '2026-12-04T10:00:00.000Z' },
        }),
        run(b, {
          runId: 'r-waits-2',
          requestId: 'q8',
          status: 'running',
          waiting: { on: 'operator', since: '2026-12-01T10:00:00.000Z' },
        }),
      ]);
      // Another tenant's runs are not counted.
      await tx.appendEvents(other.tenantId, other.threadId, 0, makeEvents(other, 1, 1));
      await tx.saveProjection({ ...other, version: 1, state: state(1) }, [run(other, { status: 'running' })]);
    });
    const item = (id: string, extra = {}) => ({
      consumer: 'c',
      messageId: `${id}-${a.threadId}`,
      tenantId: a.tenantId,
      threadId: `${a.threadId}-new-${id}`,
      requestId: `req-${id}`,
      ...extra,
    });
    const loaded = await current().store.transaction((tx) =>
      tx.claimAndLoadMany([
        item('m1', { activeRunsUpTo: 10, waitingRunsUpTo: 10 }),
        item('m2', { activeRunsUpTo: 2, waitingRunsUpTo: 1 }),
        item('m3'),
      ]),
    );
    expect(loaded.map((l) => l.activeRuns)).toEqual([3, 2, undefined]);
    expect(loaded.map((l) => l.waitingRuns)).toEqual([2, 1, undefined]);
  });

  it("counts the tenant's runs in flight per concurrency key up to its max, and decides a key's admissions one transaction at a time", async () => {
    const a = newThreadRef();
    const keys = (...k: string[]) => ({ slotKeys: k });
    await current().store.transaction(async (tx) => {
      await tx.appendEvents(a.tenantId, a.threadId, 0, makeEvents(a, 1, 1));
      await tx.saveProjection({ ...a, version: 1, state: state(1) }, [
        run(a, { runId: 'k1', requestId: 'k1', status: 'running', ...keys('customer=1', 'org=acme') }),
        run(a, { runId: 'k2', requestId: 'k2', status: 'queued', ...keys('customer=1') }),
        run(a, { runId: 'k3', requestId: 'k3', status: 'completed', ...keys('customer=1') }),
        // Held for admission, or waiting for a human: not in flight, so holding no key.
        run(a, {
          runId: 'k4',
          requestId: 'k4',
          status: 'queued',
          waiting: { on: 'admission', since: '2026-12-01T10:00:00.000Z' },
          ...keys('customer=1'),
        }),
        run(a, {
          runId: 'k5',
          requestId: 'k5',
          status: 'running',
          waiting: { on: 'approval', since: '2026-12-01T10:00:00.000Z' },
          ...keys('customer=2'),
        }),
      ]);
    });
    // Another tenant's runs with the same key are not counted.
    const other = newThreadRef();
    await current().store.transaction(async (tx) => {
      await tx.appendEvents(other.tenantId, other.threadId, 0, makeEvents(other, 1, 1));
      await tx.saveProjection({ ...other, version: 1, state: state(1) }, [
        run(other, { status: 'running', ...keys('customer=1') }),
      ]);
    });
    const claim = (id: string, slots: { key: string; max: number }[]) => ({
      consumer: 'c',
      messageId: `${id}-${a.threadId}`,
      tenantId: a.tenantId,
      threadId: `${a.threadId}-${id}`,
      requestId: `req-${id}`,
      slotsUpTo: slots,
    });
    const [counted] = await current().store.transaction((tx) =>
      tx.claimAndLoadMany([
        claim('m1', [
          { key: 'customer=1', max: 5 },
          { key: 'org=acme', max: 1 },
          { key: 'customer=2', max: 3 },
        ]),
      ]),
    );
    expect(counted!.slotRuns).toEqual({ 'customer=1': 2, 'org=acme': 1, 'customer=2': 0 });

    // A second claim of the same key waits for the first transaction, then counts its run.
    let firstClaimed!: () => void;
    const claimedFirst = new Promise<void>((resolve) => (firstClaimed = resolve));
    let finishFirst!: () => void;
    const firstMayCommit = new Promise<void>((resolve) => (finishFirst = resolve));
    const slot = [{ key: 'customer=9', max: 5 }];
    const first = current().store.transaction(async (tx) => {
      const [loaded] = await tx.claimAndLoadMany([claim('m2', slot)]);
      firstClaimed();
      await firstMayCommit;
      const ref = { tenantId: a.tenantId, threadId: `${a.threadId}-m2` };
      await tx.appendEvents(ref.tenantId, ref.threadId, 0, makeEvents(ref, 1, 1));
      await tx.saveProjection({ ...ref, version: 1, state: state(1) }, [
        run(ref, { runId: 'r-m2', requestId: 'req-m2', status: 'running', ...keys('customer=9') }),
      ]);
      return loaded!.slotRuns;
    });
    await claimedFirst;
    let secondCounted: Record<string, number> | undefined;
    const second = current().store.transaction(async (tx) => {
      const [loaded] = await tx.claimAndLoadMany([claim('m3', slot)]);
      secondCounted = loaded!.slotRuns;
      return secondCounted;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(secondCounted).toBeUndefined();
    // Another key of the same tenant is not held up.
    const [free] = await current().store.transaction((tx) =>
      tx.claimAndLoadMany([claim('m4', [{ key: 'customer=10', max: 5 }])]),
    );
    expect(free!.slotRuns).toEqual({ 'customer=10': 0 });
    finishFirst();
    expect(await first).toEqual({ 'customer=9': 0 });
    expect(await second).toEqual({ 'customer=9': 1 });
  });

  it("counts the tenant's runs with a throttle key that started after its since (ended ones too), and decides a throttle's admissions one transaction at a time", async () => {
    const a = newThreadRef();
    const key = `support:userId=${a.threadId}`;
    const throttled = (runId: string, startedAt: string | null, patch: Partial<RunRow> = {}) =>
      run(a, { runId, requestId: runId, throttleKey: key, startedAt, ...patch });
    await current().store.transaction(async (tx) => {
      await tx.appendEvents(a.tenantId, a.threadId, 0, makeEvents(a, 1, 1));
      await tx.saveProjection({ ...a, version: 1, state: state(1) }, [
        throttled('t1', '2026-12-01T10:00:30.000Z'),
        throttled('t2', '2026-12-01T10:00:50.000Z', {
          status: 'completed',
          endedAt: '2026-12-01T10:00:55.000Z',
          outcome: { status: 'completed', output: 'ok' },
        }),
        // Later than the claim's own time (another orchestrator's clock ahead): counted too.
        throttled('t3', '2026-12-01T10:02:00.000Z'),
        // Started at `since` or before it, not started yet, or another key: not counted.
        throttled('t4', '2026-12-01T10:00:00.000Z'),
        throttled('t5', null, { status: 'queued' }),
        run(a, { runId: 't6', requestId: 't6', throttleKey: `${key}-other`, startedAt: '2026-12-01T10:00:40.000Z' }),
      ]);
    });
    const claim = (id: string, limit: number) => ({
      consumer: 'c',
      messageId: `${id}-${a.threadId}`,
      tenantId: a.tenantId,
      threadId: `${a.threadId}-${id}`,
      requestId: `req-${id}`,
      throttleUpTo: { key, limit, since: '2026-12-01T10:00:00.000Z' },
    });
    const [counted, capped] = await current().store.transaction((tx) =>
      tx.claimAndLoadMany([claim('m1', 10), claim('m2', 2)]),
    );
    expect(counted!.throttleStarts).toBe(3);
    expect(capped!.throttleStarts).toBe(2);

    // A second claim of the same throttle waits for the first transaction, then counts its start.
    let firstClaimed!: () => void;
    const claimedFirst = new Promise<void>((resolve) => (firstClaimed = resolve));
    let finishFirst!: () => void;
    const firstMayCommit = new Promise<void>((resolve) => (finishFirst = resolve));
    const first = current().store.transaction(async (tx) => {
      const [loaded] = await tx.claimAndLoadMany([claim('m3', 10)]);
      firstClaimed();
      await firstMayCommit;
      const ref = { tenantId: a.tenantId, threadId: `${a.threadId}-m3` };
      await tx.appendEvents(ref.tenantId, ref.threadId, 0, makeEvents(ref, 1, 1));
      await tx.saveProjection({ ...ref, version: 1, state: state(1) }, [
        run(ref, { runId: 'r-m3', requestId: 'req-m3', throttleKey: key, startedAt: '2026-12-01T10:01:00.000Z' }),
      ]);
      return loaded!.throttleStarts;
    });
    await claimedFirst;
    let secondCounted: number | undefined;
    const second = current().store.transaction(async (tx) => {
      const [loaded] = await tx.claimAndLoadMany([claim('m4', 10)]);
      secondCounted = loaded!.throttleStarts;
      return secondCounted;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(secondCounted).toBeUndefined();
    finishFirst();
    expect(await first).toBe(3);
    expect(await second).toBe(4);
  });

  it("finds the tenant's latest queued run of a debounce key, by request time", async () => {
    const a = newThreadRef();
    const key = `indexer:documentId=${a.threadId}`;
    const held = (runId: string, since: string, patch: Partial<RunRow> = {}) =>
      run(a, {
        runId,
        requestId: runId,
        status: 'queued',
        startedAt: null,
        debounceKey: key,
        waiting: { on: 'admission', since },
        ...patch,
      });
    await current().store.transaction(async (tx) => {
      await tx.appendEvents(a.tenantId, a.threadId, 0, makeEvents(a, 1, 1));
      await tx.saveProjection({ ...a, version: 1, state: state(1) }, [
        held('d1', '2026-12-01T10:00:01.000Z'),
        held('d2', '2026-12-01T10:00:03.000Z'),
        held('d3', '2026-12-01T10:00:02.000Z'),
        // Started, or of another key: not a candidate.
        held('d4', '2026-12-01T10:00:09.000Z', { status: 'running', startedAt: '2026-12-01T10:00:09.000Z' }),
        held('d5', '2026-12-01T10:00:09.000Z', { debounceKey: `${key}-other` }),
      ]);
    });
    const claim = (id: string, debounceOf: string) => ({
      consumer: 'c',
      messageId: `${id}-${a.threadId}`,
      tenantId: a.tenantId,
      threadId: `${a.threadId}-${id}`,
      debounceOf,
    });
    const [latest, none] = await current().store.transaction((tx) =>
      tx.claimAndLoadMany([claim('m1', key), claim('m2', `${key}-none`)]),
    );
    expect(latest!.debounceLatest).toBe('d2');
    expect(none!.debounceLatest).toBeUndefined();
  });
}
