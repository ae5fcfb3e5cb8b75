import path from 'node:path';
import { FEED_DECISION_TYPE, feedEvents, isSealed, subjects, type ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

/*
 * Feed v2 (ADR 0042): one message per committed decision on `<prefix>.feed.<tenant>.<thread>`, its events
 * in order and sealed as the log stores them; nothing on the per-event subject any more. Orchestrator and
 * tool executor are real processes; the test's services seal content (a key file).
 */
const TENANT = 'acme';
const AGENTS = path.resolve(__dirname, '../agents/loop');
const principal = { id: 'alice', roles: ['runner'] };

describe('feed v2: one message per decision', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([stack.start('orchestrator', { AGENTS_DIR: AGENTS }), stack.start('tool-executor')]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** Every message of the EVENTS stream on `subject`, in stream order. */
  async function onSubject(subject: string) {
    const jsm = await stack.nc.jetstreamManager();
    const stream = `${stack.prefix.stream}_EVENTS`;
    const { state } = await jsm.streams.info(stream);
    const out: { subject: string; headers: Record<string, string>; data: unknown }[] = [];
    for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => undefined);
      if (!m || m.subject !== subject) continue;
      const headers: Record<string, string> = {};
      for (const [k, v] of m.header ?? []) headers[k] = v[0]!;
      out.push({ subject: m.subject, headers, data: m.json() });
    }
    return out;
  }
  const run = async (requestId: string) => {
    await stack.publishRequest(TENANT, {
      requestId,
      agent: 'demo',
      input: [{ role: 'user', content: 'What is the weather in Oslo and Rome?' }],
      principal,
    });
    const thread = threadIdFor(TENANT, requestId);
    const events = await stack.waitFor(TENANT, thread, terminal(runIdFor(TENANT, requestId)));
    return { thread, events };
  };
  /** The feed of a thread once it caught up with the log (the relay publishes right after each commit). */
  const feedOf = async (thread: string, log: ThreadEvent[]) => {
    const s = subjects(stack.prefix.subject);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const decisions = await onSubject(s.feed(TENANT, thread));
      const perEvent = await onSubject(s.events(TENANT, thread));
      const carried = decisions.flatMap((d) => feedEvents(d.data, d.subject));
      if (carried.length >= log.length || Date.now() > deadline) return { decisions, perEvent, carried };
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  it('carries every committed event once, in order, a decision to a message, sealed as the log stores it', async () => {
    const { thread, events } = await run('feed-1');
    const { decisions, perEvent, carried } = await feedOf(thread, events);
    // Every event of the log, in order, each once.
    expect(carried.map((e) => [e.version, e.id, e.type])).toEqual(events.map((e) => [e.version, e.id, e.type]));
    // Fewer messages than events: a decision's events travel together; none on the per-event subject.
    expect(decisions.length).toBeLessThan(events.length);
    expect(perEvent).toEqual([]);
    for (const d of decisions) {
      const first = feedEvents(d.data)[0]!;
      expect(d.headers).toMatchObject({
        'Nats-Msg-Id': `decision:${first.id}`,
        'Ratchet-Message-Type': FEED_DECISION_TYPE,
        'Ratchet-Tenant': TENANT,
      });
    }
    // Sealed exactly as the log stores it (the same ciphertext), and sealed at all.
    const stored = await stack.orchestratorDb.sql.query<{ id: string; data: unknown }>(
      `select id, data from ${stack.orchestratorDb.sql.table('thread_events')} where tenant_id = ? and thread_id = ?`,
      [TENANT, thread],
    );
    const byId = new Map(stored.map((r) => [r.id, r.data]));
    for (const e of carried) expect([e.id, e.data]).toEqual([e.id, byId.get(e.id)]);
    const answer = carried.find((e) => e.type === 'model.responded')!;
    expect(isSealed((answer.data as { content: unknown }).content)).toBe(true);
  });

  it.each([
    ['between a commit and its feed publish', 'orchestrator.after-commit@3', 'feed-2'],
    [
      'mid-batch, right after a decision message was published and before it was marked sent',
      'outbox.after-publish.feed.decision@2',
      'feed-3',
    ],
  ])(
    'an orchestrator SIGKILLed %s: every decision is on the feed once, nothing is missing',
    async (_, failpoint, requestId) => {
      await stack.services.get('orchestrator')?.kill('SIGKILL');
      const doomed = await stack.start(
        'orchestrator',
        { AGENTS_DIR: AGENTS, RATCHET_FAILPOINTS: failpoint },
        'orchestrator-doomed',
      );
      await stack.publishRequest(TENANT, {
        requestId,
        agent: 'demo',
        input: [{ role: 'user', content: 'What is the weather in Oslo and Rome?' }],
        principal,
      });
      expect(await doomed.exited).toMatchObject({ signal: 'SIGKILL' });
      await stack.start('orchestrator', { AGENTS_DIR: AGENTS });
      const thread = threadIdFor(TENANT, requestId);
      const events = await stack.waitFor(TENANT, thread, terminal(runIdFor(TENANT, requestId)), 60_000);
      const { decisions, carried } = await feedOf(thread, events);
      expect(carried.map((e) => [e.version, e.id])).toEqual(events.map((e) => [e.version, e.id]));
      const ids = decisions.map((d) => d.headers['Nats-Msg-Id']);
      expect(new Set(ids).size).toBe(ids.length);
    },
  );
});
