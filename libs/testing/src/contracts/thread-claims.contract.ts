import { expect, it } from '@jest/globals';
import { ConcurrencyError, type OutboxMessage } from '@ratchet/domain';
import { makeEvents, makeMessages, newThreadRef } from './fixtures';
import { run, state } from './thread-store.rows';
import type { ThreadStoreFixture } from './thread-store.contract';

/**
 * The ThreadStore contract's cases for claiming messages and loading what a decision needs with them
 * (inbox claims, claim-and-load, the feed rows left unpublished, claims with the writes; what a claim
 * counts for an admission is in thread-admission-claims.contract.ts). Called inside the contract's describe.
 */
export function threadClaimCases(current: () => ThreadStoreFixture): void {
  it('returns a claim that asks the rows on a subject not marked sent, oldest first, as stored', async () => {
    const ref = newThreadRef();
    const feed = `ratchet.feed.${ref.tenantId}.${ref.threadId}`;
    const [older, newer, sent] = makeMessages(3).map((m) => ({ ...m, subject: feed }));
    const [elsewhere] = makeMessages(1);
    await current().store.transaction(async (tx) => {
      await tx.appendEvents(ref.tenantId, ref.threadId, 0, makeEvents(ref, 1, 1));
      await tx.enqueue([older!, sent!, elsewhere!]);
    });
    await current().store.transaction(async (tx) => {
      await tx.appendEvents(ref.tenantId, ref.threadId, 1, makeEvents(ref, 2, 2));
      await tx.enqueue([newer!]);
      tx.markSent([sent!.id]);
    });
    const item = { consumer: 'c', tenantId: ref.tenantId, threadId: ref.threadId };
    const [asked, notAsked] = await current().store.transaction((tx) =>
      tx.claimAndLoadMany([
        { ...item, messageId: `m1-${ref.threadId}`, unsentOn: feed },
        { ...item, messageId: `m2-${ref.threadId}` },
      ]),
    );
    const stored = (m: OutboxMessage) => ({ id: m.id, subject: m.subject, headers: m.headers, payload: m.payload });
    expect(asked!.unsent).toEqual([stored(older!), stored(newer!)]);
    expect(notAsked!.unsent).toBeUndefined();
    // A message processed before still gets them: its decision may be the one whose publish was lost.
    const [redelivered] = await current().store.transaction((tx) =>
      tx.claimAndLoadMany([{ ...item, messageId: `m1-${ref.threadId}`, unsentOn: feed }]),
    );
    expect([redelivered!.claimed, redelivered!.unsent?.map((m) => m.id)]).toEqual([false, [older!.id, newer!.id]]);
    const none = await current().store.transaction((tx) =>
      tx.claimAndLoadMany([{ ...item, messageId: `m3-${ref.threadId}`, unsentOn: `${feed}.other` }]),
    );
    expect(none[0]!.unsent).toEqual([]);
  });

  it('claims an inbox message once, for ever, per consumer', async () => {
    const messageId = `m-${newThreadRef().threadId}`;
    expect(await current().store.transaction((tx) => tx.claimInbox('consumer-a', messageId))).toBe(true);
    expect(await current().store.transaction((tx) => tx.claimInbox('consumer-a', messageId))).toBe(false);
    expect(
      await current().store.transaction(async (tx) => [
        await tx.claimInbox('consumer-a', messageId),
        await tx.claimInbox('consumer-b', messageId),
        await tx.claimInbox('consumer-b', messageId),
      ]),
    ).toEqual([false, true, false]);
    expect(await current().store.transaction((tx) => tx.claimInbox('consumer-b', messageId))).toBe(false);
  });

  it('claims and loads many threads at once: claim, projection, newer events and the known request, in order', async () => {
    const a = newThreadRef();
    const b = newThreadRef();
    const fresh = newThreadRef();
    const requestId = `req-${a.threadId}`;
    await current().store.transaction(async (tx) => {
      await tx.appendEvents(a.tenantId, a.threadId, 0, makeEvents(a, 1, 2));
      await tx.saveProjection({ ...a, version: 2, state: state(2) }, [
        run(a, { runId: `run-${a.threadId}`, requestId }),
      ]);
      // b's projection lags its log by one event: the newer one comes with it.
      await tx.appendEvents(b.tenantId, b.threadId, 0, makeEvents(b, 1, 2));
      await tx.saveProjection({ ...b, version: 1, state: state(1) }, []);
    });
    const item = (ref: { tenantId: string; threadId: string }, id: string, extra = {}) => ({
      consumer: 'c',
      messageId: `${id}-${ref.threadId}`,
      tenantId: ref.tenantId,
      threadId: ref.threadId,
      ...extra,
    });
    const items = [
      item(b, 'm1'),
      item(a, 'm2', { requestId }),
      item(fresh, 'm3'),
      item(a, 'm4', { requestId: 'nope' }),
    ];
    const loaded = await current().store.transaction((tx) => tx.claimAndLoadMany(items));
    expect(loaded.map((l) => [l.claimed, l.projection?.version, l.newer.map((e) => e.version)])).toEqual([
      [true, 1, [2]],
      [true, 2, []],
      [true, undefined, []],
      [true, 2, []],
    ]);
    expect(loaded[0]!.projection?.state).toEqual(state(1));
    expect(loaded[1]!.known).toMatchObject({ runId: `run-${a.threadId}`, threadId: a.threadId });
    expect(loaded[3]!.known).toBeUndefined();
    // Claimed for ever: a redelivery of the same messages loads nothing.
    const again = await current().store.transaction((tx) => tx.claimAndLoadMany(items.slice(0, 2)));
    expect(again.map((l) => l.claimed)).toEqual([false, false]);
    expect(await current().store.transaction((tx) => tx.claimAndLoadMany([]))).toEqual([]);
  });

  it('claims with the writes on a state it did not read: kept when the thread is still there, refused when it moved or the message was seen', async () => {
    const ref = newThreadRef();
    await current().store.transaction(async (tx) => {
      await tx.appendEvents(ref.tenantId, ref.threadId, 0, makeEvents(ref, 1, 1));
      await tx.saveProjection({ ...ref, version: 1, state: state(1) }, []);
    });
    const decideOn = (messageId: string, version: number) =>
      current().store.transaction(async (tx) => {
        tx.claimOnWrite('c', messageId, ref.tenantId, ref.threadId, version);
        await tx.appendEvents(ref.tenantId, ref.threadId, version, makeEvents(ref, version + 1, 1));
        await tx.saveProjection({ ...ref, version: version + 1, state: state(version + 1) }, []);
      });
    await decideOn('m1', 1);
    expect(await current().store.transaction((tx) => tx.claimInbox('c', 'm1'))).toBe(false);
    // Decided on version 1 while the thread is at 2: nothing of it is kept, its message stays unclaimed.
    await expect(decideOn('m2', 1)).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await current().store.transaction((tx) => tx.claimInbox('c', 'm2'))).toBe(true);
    // A message claimed before fails the commit, even on the current version.
    await expect(decideOn('m1', 2)).rejects.toThrow();
    expect((await current().store.readProjection(ref.tenantId, ref.threadId))?.version).toBe(2);
    expect((await current().store.readEvents(ref.tenantId, ref.threadId)).map((e) => e.version)).toEqual([1, 2]);
  });
}
