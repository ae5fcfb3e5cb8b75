import { FeedDecision, feedEvents, FeedVersionError, subjects, type ThreadEvent } from '@ratchet/contracts';
import { feedDecisionMessages } from './feed-messages';

const s = subjects('p');
const event = (version: number, text = 'x'): ThreadEvent =>
  ({
    id: `ev-${version}`,
    tenantId: 'acme',
    threadId: 'th-1',
    runId: 'run-1',
    version,
    type: 'model.responded',
    at: '2026-12-06T10:00:00.000Z',
    data: { content: text, toolCalls: [] },
  }) as unknown as ThreadEvent;

describe('feed v2: one message per committed decision', () => {
  it('given a decision of three events, when it is published, then one message carries them in order, named by its first event', () => {
    const events = [event(4), event(5), event(6)];
    const [message, ...rest] = feedDecisionMessages(s, events);
    expect(rest).toEqual([]);
    expect(message).toMatchObject({
      id: 'decision:ev-4',
      subject: 'p.feed.acme.th-1',
      sealAs: 'decision',
      headers: { 'Nats-Msg-Id': 'decision:ev-4', 'Ratchet-Message-Type': 'feed.decision', 'Ratchet-Tenant': 'acme' },
      payload: { feed: 2, tenantId: 'acme', threadId: 'th-1', decisionId: 'decision:ev-4', events },
    });
    expect(message!.payload).not.toHaveProperty('part');
    expect(FeedDecision.parse(message!.payload).events.map((e) => e.version)).toEqual([4, 5, 6]);
  });

  it('given a decision over the size bound, when it is published, then it is split in order into parts, each named by its own first event', () => {
    const big = 'y'.repeat(400);
    const events = [event(1, big), event(2, big), event(3, big), event(4, 'small')];
    const messages = feedDecisionMessages(s, events, 1200);
    expect(messages.map((m) => m.id)).toEqual(['decision:ev-1', 'decision:ev-3']);
    const payloads = messages.map((m) => FeedDecision.parse(m.payload));
    expect(payloads.map((p) => [p.decisionId, p.part])).toEqual([
      ['decision:ev-1', { index: 0, count: 2 }],
      ['decision:ev-1', { index: 1, count: 2 }],
    ]);
    expect(payloads.flatMap((p) => p.events.map((e) => e.version))).toEqual([1, 2, 3, 4]);
    // An event larger than the bound travels alone.
    expect(feedDecisionMessages(s, [event(1, 'z'.repeat(5000)), event(2)], 1000).map((m) => m.id)).toEqual([
      'decision:ev-1',
      'decision:ev-2',
    ]);
  });

  it('given no events, then nothing is published', () => {
    expect(feedDecisionMessages(s, [])).toEqual([]);
  });

  it('a reader of v2 refuses a per-event message or another version by name, and a gap in the versions', () => {
    const [message] = feedDecisionMessages(s, [event(1), event(2)]);
    expect(feedEvents(message!.payload).map((e) => e.id)).toEqual(['ev-1', 'ev-2']);
    expect(() => feedEvents(event(1), 'p.events.acme.th-1')).toThrow(FeedVersionError);
    expect(() => feedEvents(event(1))).toThrow(/feed message of version none .* this reader reads feed v2/);
    expect(() => feedEvents({ ...(message!.payload as object), feed: 3 })).toThrow(/version 3/);
    expect(() => feedEvents({ ...(message!.payload as object), events: [event(1), event(3)] })).toThrow(
      /follow each other/,
    );
  });
});
