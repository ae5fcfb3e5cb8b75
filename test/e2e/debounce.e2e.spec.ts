import path from 'node:path';
import type { ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

/*
 * A debounce (docs/flow-control.md#debounce): of the requests for one document that come less than 2 s
 * apart, only the last runs. A burst of five requests for one document (each its own thread), one for
 * another document; two orchestrators, one SIGKILLed before any period is over. The last of the burst
 * runs, the four before it end superseded by it, never started; the other document's run is not touched;
 * a request sent again is answered with how its run ended.
 */

const AGENTS = path.resolve(__dirname, '../agents/debounce');
const TENANT = 'debounce';
const ENV = { AGENTS_DIR: AGENTS, ADMISSION_PASS_MS: '100' };

const ask = (stack: TestStack, requestId: string, documentId: string | undefined, replyTo?: string, msgId?: string) =>
  stack.publishRequest(
    TENANT,
    {
      requestId,
      agent: 'indexer',
      input: [{ role: 'user', content: 'index it' }],
      principal: { id: 'alice', roles: ['runner'] },
      metadata: documentId === undefined ? {} : { documentId },
      ...(replyTo ? { replyTo } : {}),
    },
    msgId,
  );
const thread = (id: string) => threadIdFor(TENANT, id);
const run = (id: string) => runIdFor(TENANT, id);
const ending = (events: ThreadEvent[], id: string) =>
  events.find((e) => e.runId === run(id) && ['run.completed', 'run.failed', 'run.cancelled'].includes(e.type));

describe('a debounce runs only the last request of a burst, through a SIGKILL', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([
      stack.start('orchestrator', ENV, 'orchestrator-a'),
      stack.start('orchestrator', ENV, 'orchestrator-b'),
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('supersedes every request of the burst but the last, which starts a period after it asked', async () => {
    const burst = ['b0', 'b1', 'b2', 'b3', 'b4'];
    const replyTo = `${stack.prefix.subject}.test.debounce.${Date.now()}`;
    const first = stack.nc.subscribe(replyTo, { max: 1 });
    await ask(stack, 'b0', 'doc-1', replyTo);
    for (const id of burst.slice(1)) {
      await new Promise((r) => setTimeout(r, 200));
      await ask(stack, id, 'doc-1');
    }
    await ask(stack, 'other', 'doc-2');
    for (const id of [...burst, 'other'])
      await stack.waitFor(TENANT, thread(id), (es) => es.some((e) => e.type === 'run.queued'));
    await stack.services.get('orchestrator-a')?.kill('SIGKILL');

    const ends = new Map<string, ThreadEvent[]>();
    for (const id of [...burst, 'other'])
      ends.set(id, await stack.waitFor(TENANT, thread(id), terminal(run(id)), 60_000));
    // Each earlier request ends superseded by a later one of the burst (the latest when it was ended).
    for (const [i, id] of burst.slice(0, -1).entries()) {
      const events = ends.get(id)!;
      const end = ending(events, id);
      expect({ id, end }).toMatchObject({ id, end: { type: 'run.cancelled', data: { by: 'debounce' } } });
      const by = burst.findIndex((b) => run(b) === (end?.type === 'run.cancelled' ? end.data.supersededBy : undefined));
      expect({ id, laterOne: by > i }).toEqual({ id, laterOne: true });
      expect(events.map((e) => e.type)).not.toContain('run.started');
    }
    for (const id of ['b4', 'other']) {
      const events = ends.get(id)!;
      expect({ id, end: ending(events, id)?.type }).toEqual({ id, end: 'run.completed' });
      // It started no sooner than its period after its request.
      const asked = Date.parse(events.find((e) => e.type === 'run.requested')!.at);
      const started = Date.parse(events.find((e) => e.type === 'run.started')!.at);
      expect(started - asked).toBeGreaterThanOrEqual(2000);
    }
    // The requester of a superseded run hears how it ended, and again when it sends the request again.
    for await (const m of first) expect(m.json()).toMatchObject({ requestId: 'b0', status: 'cancelled' });
    const again = stack.nc.subscribe(`${replyTo}.again`, { max: 1 });
    await ask(stack, 'b0', 'doc-1', `${replyTo}.again`, `${TENANT}:b0:again`);
    for await (const m of again)
      expect(m.json()).toMatchObject({ requestId: 'b0', status: 'cancelled', runId: run('b0') });
  });

  it("refuses a request whose metadata lacks the debounce's key, naming it", async () => {
    const replyTo = `${stack.prefix.subject}.test.debounce.keyless.${Date.now()}`;
    const outcome = stack.nc.subscribe(replyTo, { max: 1 });
    await ask(stack, 'keyless', undefined, replyTo);
    for await (const m of outcome)
      expect(m.json()).toMatchObject({
        status: 'rejected',
        error: { code: 'request.debounce_key_missing', message: expect.stringContaining('metadata.documentId') },
      });
  });
});
