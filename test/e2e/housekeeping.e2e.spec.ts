import { runIdFor, threadIdFor } from '@ratchet/contracts';
import { TestStack, terminal } from './stack';

/*
 * The built-in housekeeping through real orchestrators: two of them tick it every two seconds over one
 * database. Each tick is run by one of them and recorded once; it prunes what outlived its age and
 * nothing else: not another tenant's threads (no rule for it), not threads still young, not pending
 * outbox rows or webhook deliveries, however old.
 */
const HOUR = 3_600_000;

interface Tick {
  tick_at: string;
  decided_by: string;
  report: Record<string, unknown>;
}

describe('housekeeping: built-in retention and pruning, once per tick across orchestrators', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.create();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const sql = () => stack.orchestratorDb.sql;
  const count = async (table: string, where: string, params: unknown[] = []) =>
    (await sql().query<{ n: number }>(`select count(*)::int as n from ${table} where ${where}`, params))[0]!.n;
  const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`timed out waiting for ${what}`);
  };

  it('prunes what is old, leaves what is young, pending or unruled, and runs each tick on one orchestrator', async () => {
    // 1. Real threads of two tenants, made with housekeeping off.
    const setup = await stack.start('orchestrator', { HOUSEKEEPING_ENABLED: 'false' }, 'orchestrator-setup');
    for (const tenant of ['alpha', 'beta']) {
      const reply = await stack.nc.request(
        `${stack.prefix.subject}.agents.${tenant}.register`,
        JSON.stringify({
          op: 'register',
          principal: { id: 'ops', roles: ['admin'] },
          definition: { name: 'quick', model: { provider: 'scripted', script: [{ reply: 'done' }] } },
        }),
        { timeout: 10_000 },
      );
      expect(reply.json()).toMatchObject({ ok: true });
    }
    const threads = [
      { tenant: 'alpha', requestId: 'alpha-old' },
      { tenant: 'alpha', requestId: 'alpha-young' },
      { tenant: 'beta', requestId: 'beta-old' },
    ];
    for (const t of threads) {
      await stack.publishRequest(t.tenant, {
        requestId: t.requestId,
        agent: 'quick',
        input: [{ role: 'user', content: 'go' }],
        principal: { id: 'svc', roles: ['runner'] },
      });
    }
    for (const t of threads)
      await stack.waitFor(t.tenant, threadIdFor(t.tenant, t.requestId), terminal(runIdFor(t.tenant, t.requestId)));
    await stack.outboxSettled();
    await setup.kill('SIGTERM');

    // 2. Age some of it: two finished threads idle for two days, and rows of every kind, old and young.
    const o = (t: string) => sql().table(t);
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    const old = ago(48 * HOUR);
    for (const [tenant, requestId] of [
      ['alpha', 'alpha-old'],
      ['beta', 'beta-old'],
    ] as const)
      await sql().run(`update ${o('threads')} set updated_at = ? where tenant_id = ? and thread_id = ?`, [
        old,
        tenant,
        threadIdFor(tenant, requestId),
      ]);
    for (const schema of ['"orchestrator"', '"tools"']) {
      await sql().run(`insert into ${schema}.inbox (consumer, message_id, processed_at) values (?, ?, ?), (?, ?, ?)`, [
        'hk',
        'old-msg',
        old,
        'hk',
        'young-msg',
        ago(60_000),
      ]);
      await sql().run(
        `insert into ${schema}.failed_messages (consumer, subject, code, reason, payload, failed_at)
         values ('hk', 's', 'c', 'old', '{}', ?), ('hk', 's', 'c', 'young', '{}', ?)`,
        [old, ago(60_000)],
      );
    }
    const delivery = (id: string, status: string, updatedAt: string) =>
      sql().run(
        `insert into ${o('webhook_deliveries')} (tenant_id, delivery_id, url, body, status, next_attempt_at, created_at, updated_at)
         values ('alpha', ?, 'https://example.com/hook', '{}'::jsonb, ?, ?, ?, ?)`,
        [id, status, '2999-01-01T00:00:00Z', updatedAt, updatedAt],
      );
    await delivery('old-delivered', 'delivered', old);
    await delivery('old-dead', 'dead', old);
    await delivery('old-pending', 'pending', old);
    await delivery('young-delivered', 'delivered', ago(60_000));
    for (const [at, decided] of [
      ['2020-01-01T00:00:00Z', old],
      ['2021-01-01T00:00:00Z', ago(60_000)],
    ])
      await sql().run(
        `insert into ${o('schedule_ticks')} (tenant_id, schedule_id, tick_at, action, decided_at, decided_by)
         values ('beta', 'sch', ?, 'start', ?, 'x')`,
        [at, decided],
      );
    // An outbox row still to publish (leased far ahead, so no relay takes it meanwhile): pending, never pruned.
    await sql().run(
      `insert into ${o('outbox')} (id, subject, headers, payload, created_at, available_at)
       values ('hk-pending', ?, '{}'::jsonb, '{}'::jsonb, ?, '2999-01-01T00:00:00Z')`,
      [`${stack.prefix.subject}.nowhere`, old],
    );

    // Idempotency-Keys the gateway answered: one taken two days ago, one a minute ago.
    const keys = '"gateway".idempotency_keys';
    for (const [key, at] of [
      ['hk-old-key', old],
      ['hk-young-key', ago(60_000)],
    ])
      await sql().run(
        `insert into ${keys} (tenant_id, key, operation, request_digest, principal_id, status, response, created_at)
         values ('alpha', ?, 'POST /v1/schedules', 'sha256:x', 'key:k', 201, '{}'::jsonb, ?)`,
        [key, at],
      );

    // 3. Two orchestrators, housekeeping every two seconds: alpha's threads dropped after a day, beta has no rule.
    const env = {
      // The tick lines are info: the test reads them to see who ran which tick.
      LOG_LEVEL: 'info',
      HOUSEKEEPING_CRON: '*/2 * * * * *',
      HOUSEKEEPING_CHECK_MS: '100',
      RATCHET_RETENTION: 'alpha=drop:1d',
      HOUSEKEEPING_INBOX_MAX_AGE: '1h',
      HOUSEKEEPING_FAILED_MESSAGES_MAX_AGE: '1h',
      HOUSEKEEPING_WEBHOOKS_MAX_AGE: '1h',
      HOUSEKEEPING_SCHEDULE_TICKS_MAX_AGE: '1h',
      HOUSEKEEPING_IDEMPOTENCY_KEYS_MAX_AGE: '1d',
    };
    const [a, b] = await Promise.all([
      stack.start('orchestrator', env, 'orchestrator-1'),
      stack.start('orchestrator', env, 'orchestrator-2'),
    ]);
    await until('three housekeeping ticks', async () => (await count(o('housekeeping_ticks'), 'true')) >= 3);
    await Promise.all([a.kill('SIGTERM'), b.kill('SIGTERM')]);

    // Each tick ran once: the ticks that either process started are exactly the ticks recorded, none twice.
    const ran = [a, b].flatMap((p) =>
      p.logs
        .split('\n')
        .filter((l) => l.includes('housekeeping tick started'))
        .map((l) => (JSON.parse(l) as { tickAt: string }).tickAt),
    );
    const ticks = await sql().query<Tick>(
      `select to_char(tick_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as tick_at, decided_by, report
         from ${o('housekeeping_ticks')} order by tick_at`,
    );
    expect(ran.sort()).toEqual(ticks.map((t) => t.tick_at));
    expect(new Set(ran).size).toBe(ran.length);
    expect(ticks.every((t) => ['orchestrator-1', 'orchestrator-2'].includes(t.decided_by))).toBe(true);
    // The first tick did the work; the later ones found nothing left to do.
    expect(ticks[0]!.report).toMatchObject({
      threads: { dropped: 1, compacted: 0, failed: 0 },
      'webhook-deliveries': { deleted: 2 },
      'schedule-ticks': { deleted: 1 },
      'idempotency-keys': { deleted: 1 },
      inbox: { 'orchestrator.inbox': expect.any(Number), 'tools.inbox': 1 },
      'failed-messages': { 'orchestrator.failed_messages': 1, 'tools.failed_messages': 1 },
    });
    for (const t of ticks.slice(1))
      expect(t.report).toMatchObject({
        threads: { dropped: 0 },
        'webhook-deliveries': { deleted: 0 },
        'schedule-ticks': { deleted: 0 },
        'idempotency-keys': { deleted: 0 },
        'failed-messages': { 'orchestrator.failed_messages': 0, 'tools.failed_messages': 0 },
      });

    // 4. What was pruned, and what was not.
    const thread = (tenant: string, requestId: string) =>
      count(o('threads'), 'tenant_id = ? and thread_id = ?', [tenant, threadIdFor(tenant, requestId)]);
    const events = (tenant: string, requestId: string) =>
      count(o('thread_events'), 'tenant_id = ? and thread_id = ?', [tenant, threadIdFor(tenant, requestId)]);
    expect([await thread('alpha', 'alpha-old'), await events('alpha', 'alpha-old')]).toEqual([0, 0]);
    expect(await thread('alpha', 'alpha-young')).toBe(1);
    expect(await events('alpha', 'alpha-young')).toBeGreaterThan(0);
    expect(await thread('beta', 'beta-old')).toBe(1);
    expect(await events('beta', 'beta-old')).toBeGreaterThan(0);
    for (const schema of ['"orchestrator"', '"tools"']) {
      expect(await count(`${schema}.inbox`, `consumer = 'hk' and message_id = 'old-msg'`)).toBe(0);
      expect(await count(`${schema}.inbox`, `consumer = 'hk' and message_id = 'young-msg'`)).toBe(1);
      expect(await count(`${schema}.failed_messages`, `consumer = 'hk'`)).toBe(1);
    }
    const deliveries = await sql().query<{ delivery_id: string }>(
      `select delivery_id from ${o('webhook_deliveries')} order by delivery_id`,
    );
    expect(deliveries.map((d) => d.delivery_id)).toEqual(['old-pending', 'young-delivered']);
    expect(await count(o('schedule_ticks'), `schedule_id = 'sch'`)).toBe(1);
    expect(await count(o('outbox'), `id = 'hk-pending' and sent_at is null`)).toBe(1);
    const kept = await sql().query<{ key: string }>(`select key from ${keys} where key like 'hk-%'`);
    expect(kept.map((k) => k.key)).toEqual(['hk-young-key']);
  }, 120_000);
});
