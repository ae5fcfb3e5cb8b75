import path from 'node:path';
import { MemoryClient } from '@ratchet/adapters';
import type { RecalledMemoryItem, ThreadEvent } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

const TENANT = 'acme';
const AGENTS = path.resolve(__dirname, '../agents/memory');
// Both may read the tenant's shared org/ tree; neither may write it.
const alice = { id: 'alice', roles: ['runner', 'memory.org.read'] };
const bob = { id: 'bob', roles: ['runner', 'memory.org.read'] };
/** A principal as the gateway names an API key's: its own tree is users/key.k-carol/. No org/ role. */
const carol = { id: 'key:k-carol', roles: ['runner'] };
/** The remembered value: a canary that must never reach a log through recall. */
const DRINK = 'cardamom oat latte';
const CANARY = 'cardamom';
const ALICE_ITEM = { namespace: 'users/alice/preferences', key: 'drink' };
const ORG_ITEM = { namespace: 'org/policies', key: 'office-drinks' };
const QUESTION = 'What drink do I like?';

type Row = Record<string, unknown> & { type?: string; data?: Record<string, unknown> };

describe('durable memory for agents: memory.save in one thread, recall in later ones', () => {
  let stack: TestStack;
  let memory: MemoryClient;

  const run = async (requestId: string, agent: string, principal: typeof alice, content: string) => {
    await stack.publishRequest(TENANT, { requestId, agent, input: [{ role: 'user', content }], principal });
    const threadId = threadIdFor(TENANT, requestId);
    const events = await stack.waitFor(TENANT, threadId, terminal(runIdFor(TENANT, requestId)));
    return { threadId, events };
  };
  const output = (events: ThreadEvent[]) => {
    const done = events.find((e) => e.type === 'run.completed');
    expect(done).toBeDefined();
    return (done?.data as { output: string }).output;
  };
  const recalledOf = (events: ThreadEvent[]) =>
    events
      .filter((e) => e.type === 'model.responded')
      .map((e) => (e.data as { recalled?: RecalledMemoryItem[] }).recalled);
  /** Every stored row of the thread: its events, its projection, its runs. */
  const rowsOf = async (threadId: string) => {
    const sql = stack.orchestratorDb.sql;
    const where = 'where tenant_id = ? and thread_id = ?';
    const [events, threads, runs] = await Promise.all(
      ['thread_events', 'threads', 'runs'].map((t) =>
        sql.query<Row>(`select * from ${sql.table(t)} ${where}`, [TENANT, threadId]),
      ),
    );
    return { events: events ?? [], threads: threads ?? [], runs: runs ?? [] };
  };

  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS }),
      stack.start('tool-executor'),
      stack.start('memory'),
    ]);
    memory = new MemoryClient(stack.nc, { subjectPrefix: stack.prefix.subject });
    // A tenant-wide item every principal with memory.org.read recalls, written by one allowed to.
    const org = await memory.put(TENANT, {
      principal: { id: 'ops', roles: ['memory.org.write'] },
      ...ORG_ITEM,
      value: 'drink policy: the office serves water',
    });
    expect(org.ok).toBe(true);
  });
  afterAll(async () => {
    await stack.stop();
  });

  let saveThread = '';

  it("saves alice's preference with memory.save from her message, owned by her, pointing back at the thread", async () => {
    const { threadId, events } = await run('save-1', 'memo-saver', alice, `My favourite drink is ${DRINK}.`);
    saveThread = threadId;
    const completed = events.find((e) => e.type === 'tool.completed');
    expect(completed?.data).toMatchObject({ result: { saved: true, ...ALICE_ITEM, version: 1 } });
    expect(output(events)).toContain('"saved":true');
    const got = await memory.get(TENANT, { principal: alice, ...ALICE_ITEM });
    if (!got.ok) throw new Error(JSON.stringify(got.error));
    expect(got.item).toMatchObject({
      value: { drink: DRINK },
      owner: 'alice',
      version: 1,
      provenance: { threadId, runId: runIdFor(TENANT, 'save-1') },
    });
  });

  it("puts alice's item into a later thread's prompt, and the log names it by id and version only", async () => {
    const { threadId, events } = await run('recall-alice', 'memo-recaller', alice, QUESTION);
    expect(threadId).not.toBe(saveThread);
    // The scripted model echoes the <memory> block it was given: the item reached the prompt.
    const answer = output(events);
    expect(answer).toContain(`${ALICE_ITEM.namespace}/${ALICE_ITEM.key}: {"drink":"${DRINK}"}`);
    expect(answer).toContain(`${ORG_ITEM.namespace}/${ORG_ITEM.key}: drink policy`);
    const [recalled] = recalledOf(events);
    expect(recalled).toEqual(
      expect.arrayContaining([
        { ...ALICE_ITEM, version: 1 },
        { ...ORG_ITEM, version: 1 },
      ]),
    );
    expect(recalled).toHaveLength(2);
    // Memory content is in no stored row except where the model itself said it (its answer, which is
    // transcript): not in `recalled`, not as a system message, not in the request.
    const rows = await rowsOf(threadId);
    for (const row of rows.events) {
      const data = { ...row.data };
      if (row.type === 'model.responded') delete data['content'];
      if (row.type === 'run.completed') delete data['output'];
      expect(JSON.stringify({ ...row, data })).not.toContain(CANARY);
    }
    // A run's row keeps its outcome (what the model answered, to answer a resent request the same): transcript too.
    const runsWithoutAnswers = (rows.runs as Array<Record<string, unknown>>).map((r) => ({
      ...r,
      outcome: { ...(r['outcome'] as Record<string, unknown> | null), output: undefined },
    }));
    expect(JSON.stringify(runsWithoutAnswers)).not.toContain(CANARY);
    expect(JSON.stringify(rows.threads)).not.toContain('<memory>');
  });

  it('keeps recall out of every row of a thread whose model does not repeat it', async () => {
    const { threadId, events } = await run('recall-quiet', 'memo-quiet', alice, QUESTION);
    expect(output(events)).toBe('noted');
    expect(recalledOf(events)[0]).toEqual(expect.arrayContaining([{ ...ALICE_ITEM, version: 1 }]));
    const rows = await rowsOf(threadId);
    expect(rows.events.length).toBe(events.length);
    expect(JSON.stringify(rows)).not.toContain(CANARY);
    expect(JSON.stringify(rows)).not.toContain('office serves water');
  });

  it("does not recall alice's item into bob's thread", async () => {
    const { threadId, events } = await run('recall-bob', 'memo-recaller', bob, QUESTION);
    expect(recalledOf(events)).toEqual([[{ ...ORG_ITEM, version: 1 }]]);
    const answer = output(events);
    expect(answer).toContain('office serves water');
    expect(answer).not.toContain(CANARY);
    expect(JSON.stringify(await rowsOf(threadId))).not.toContain(CANARY);
  });

  it("lets bob's run neither write into alice's tree nor recall from it; a credential-shaped principal recalls its own tree", async () => {
    const saved = await run('save-bob', 'memo-saver', bob, 'My favourite drink is mallory tea.');
    expect(saved.events.find((e) => e.type === 'tool.failed')?.data).toMatchObject({
      error: { code: 'memory.forbidden' },
    });
    const carols = await memory.put(TENANT, {
      principal: carol,
      namespace: 'users/key.k-carol/preferences',
      key: 'drink',
      value: { drink: 'hibiscus tea' },
    });
    expect(carols.ok).toBe(true);
    const { events } = await run('recall-carol', 'memo-recaller', carol, QUESTION);
    expect(recalledOf(events)).toEqual([[{ namespace: 'users/key.k-carol/preferences', key: 'drink', version: 1 }]]);
    expect(output(events)).toContain('hibiscus');
    expect(output(events)).not.toContain(CANARY);
    expect(output(events)).not.toContain('office serves water');
  });

  it("survives the deletion of the thread that saved it, and bob's erasure", async () => {
    const sql = stack.orchestratorDb.sql;
    let deleted = 0;
    for (const t of ['thread_events', 'runs', 'threads'])
      deleted += await sql.run(`delete from ${sql.table(t)} where tenant_id = ? and thread_id = ?`, [
        TENANT,
        saveThread,
      ]);
    expect(deleted).toBeGreaterThan(3);
    expect(await stack.events(TENANT, saveThread)).toEqual([]);

    const bobs = await memory.put(TENANT, {
      principal: bob,
      namespace: 'users/bob/notes',
      key: 'n1',
      value: 'bob note',
    });
    expect(bobs.ok).toBe(true);
    const forgot = await memory.forgetSubject(TENANT, { principal: bob, subject: 'bob' });
    expect(forgot).toEqual({ ok: true, erased: 1 });

    const got = await memory.get(TENANT, { principal: alice, ...ALICE_ITEM });
    expect(got).toMatchObject({ ok: true, item: { value: { drink: DRINK }, version: 1 } });
    // And it is still recalled, in yet another thread of alice's.
    const { events } = await run('recall-alice-2', 'memo-recaller', alice, QUESTION);
    expect(recalledOf(events)[0]).toEqual(expect.arrayContaining([{ ...ALICE_ITEM, version: 1 }]));
    expect(output(events)).toContain(DRINK);
  });

  it('runs without recall when the memory service does not answer, and says so', async () => {
    await stack.services.get('memory')?.kill('SIGKILL');
    const { events } = await run('recall-down', 'memo-recaller', alice, QUESTION);
    const responded = events.filter((e) => e.type === 'model.responded');
    expect(responded).toHaveLength(1);
    expect(responded[0]?.data).not.toHaveProperty('recalled');
    expect(output(events)).toBe('recalled: []');
    expect(stack.services.get('orchestrator')?.logs).toContain('memory recall skipped');
  });
});
