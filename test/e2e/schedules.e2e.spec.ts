import type { ScheduleView } from '@ratchet/contracts';
import { runProcess, sourceCommand } from '@ratchet/testing';
import { TestStack } from './stack';

/*
 * Schedules through the real services: created over HTTP, ticked by two orchestrators of which one is
 * SIGKILLed, paused with the CLI, and caught up after a clock stepped ten minutes forward. Each tick
 * starts exactly one run; none is missed beyond the policy, none is started twice.
 */
const TENANT = 'sched';
const KEY = 'rk_e2e_schedules_bootstrap_key';
const GRACE_MS = 5000;
const cli = sourceCommand('apps/cli/src/main.ts');

interface TickRow {
  tick_at: string;
  action: 'start' | 'skip';
  reason: string | null;
  request_id: string | null;
  decided_at: string;
  decided_by: string;
}

describe('schedules: exactly one run per tick across orchestrators, crashes and a stepped clock', () => {
  let stack: TestStack;
  let base: string;
  const tickerEnv = { SCHEDULES_TICK_MS: '200', SCHEDULES_GRACE_MS: String(GRACE_MS) };

  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([
      stack.start('orchestrator', tickerEnv, 'orchestrator-1'),
      stack.start('orchestrator', tickerEnv, 'orchestrator-2'),
    ]);
    const gateway = await stack.start('gateway', { GATEWAY_BOOTSTRAP_API_KEY: KEY, GATEWAY_BOOTSTRAP_TENANT: TENANT });
    base = `http://127.0.0.1:${gateway.port}`;
    // A quick agent of the tenant's own: each tick's run answers at once.
    const reply = await stack.nc.request(
      `${stack.prefix.subject}.agents.${TENANT}.register`,
      JSON.stringify({
        op: 'register',
        principal: { id: 'ops', roles: ['admin'] },
        definition: { name: 'ticker', model: { provider: 'scripted', script: [{ reply: 'tick done' }] } },
      }),
      { timeout: 10_000 },
    );
    expect(reply.json()).toMatchObject({ ok: true });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${KEY}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const ratchet = (args: string[]) => runProcess(cli.command, [...cli.args, ...args], { ...cli.env, ...stack.env });

  const ticks = async (id: string): Promise<TickRow[]> => {
    const sql = stack.orchestratorDb.sql;
    return sql.query<TickRow>(
      `select to_char(tick_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as tick_at, action, reason, request_id,
              to_char(decided_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as decided_at, decided_by
         from ${sql.table('schedule_ticks')} where tenant_id = ? and schedule_id = ? order by tick_at`,
      [TENANT, id],
    );
  };
  const runsOf = async (id: string) => {
    const sql = stack.orchestratorDb.sql;
    return sql.query<{ request_id: string; status: string }>(
      `select request_id, status from ${sql.table('runs')} where tenant_id = ? and request_id like ? order by request_id`,
      [TENANT, `schedule:${id}:%`],
    );
  };
  const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  const started = (rows: TickRow[]) => rows.filter((t) => t.action === 'start');
  /** Every run a started tick asked for exists once and completed; no run without a tick. */
  const expectOneRunPerStartedTick = async (id: string) => {
    const rows = started(await ticks(id));
    await until(
      'the runs of every started tick to end',
      async () =>
        (await runsOf(id)).every((r) => r.status === 'completed') && (await runsOf(id)).length === rows.length,
    );
    const runs = await runsOf(id);
    expect(runs.map((r) => r.request_id)).toEqual(rows.map((t) => t.request_id).sort());
    expect(new Set(runs.map((r) => r.request_id)).size).toBe(runs.length);
  };

  it('refuses bad schedules with a 400 that names the problem, and writes nothing', async () => {
    const bad = async (body: Record<string, unknown>) => {
      const res = await api('POST', '/v1/schedules', { agent: 'ticker', input: 'x', ...body });
      expect(res.status).toBe(400);
      return ((await res.json()) as { detail: string }).detail;
    };
    expect(await bad({ cron: '61 * * * *' })).toMatch(/cron\.expression: invalid cron expression "61 \* \* \* \*"/);
    expect(await bad({ cron: '0 9 * * *', timezone: 'Mars/Olympus' })).toMatch(/unknown time zone "Mars\/Olympus"/);
    expect(await bad({ everySeconds: 60, webhookUrl: 'http://127.0.0.1:9/hook' })).toMatch(
      /webhookUrl: 127\.0\.0\.1 is a loopback, private or link-local address/,
    );
    expect(await bad({ everySeconds: 60, agent: 'nobody' })).toMatch(/unknown agent "nobody"/);
    expect(await bad({ everySeconds: 60, cron: '* * * * *' })).toMatch(/exactly one/);
    const list = (await (await api('GET', '/v1/schedules')).json()) as { schedules: ScheduleView[] };
    expect(list.schedules).toEqual([]);
  });

  it('every 2 s with two orchestrators, one SIGKILLed: every tick decided once, each started tick one run, none twice', async () => {
    const created = await api('POST', '/v1/schedules', {
      id: 'every2',
      agent: 'ticker',
      input: 'tick',
      everySeconds: 2,
    });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { schedule: ScheduleView }).schedule).toMatchObject({
      id: 'every2',
      everySeconds: 2,
      paused: false,
    });
    await until('three ticks', async () => started(await ticks('every2')).length >= 3);
    await stack.services.get('orchestrator-1')!.kill('SIGKILL');
    const atKill = started(await ticks('every2')).length;
    await until('three more ticks after the kill', async () => started(await ticks('every2')).length >= atKill + 3);

    const paused = await ratchet(['schedules', 'pause', 'every2', '--tenant', TENANT, '--json']);
    expect(paused).toMatchObject({ code: 0 });
    expect(JSON.parse(paused.stdout.trim().split('\n')[0]!)).toMatchObject({
      id: 'every2',
      paused: true,
      nextDueAt: null,
    });

    const rows = await ticks('every2');
    // Consecutive ticks 2 s apart from the first to the last: nothing missed while one orchestrator died.
    const times = rows.map((t) => Date.parse(t.tick_at));
    expect(times.slice(1).map((t, i) => t - times[i]!)).toEqual(times.slice(1).map(() => 2000));
    // A tick is skipped only by the policy: while the previous run is still going (overlap: skip) — as
    // when the killed orchestrator held that run and another one resumes it.
    expect(rows.filter((t) => t.action === 'skip').map((t) => t.reason)).toEqual(
      rows.filter((t) => t.action === 'skip').map(() => 'overlap'),
    );
    expect(started(rows).length).toBeGreaterThanOrEqual(5);
    expect(new Set(rows.map((t) => t.decided_by))).toContain('orchestrator-2');
    await expectOneRunPerStartedTick('every2');
  });

  it('the CLI creates, lists, resumes and deletes a schedule', async () => {
    const created = await ratchet([
      'schedules',
      'create',
      '--tenant',
      TENANT,
      '--id',
      'sync',
      '--agent',
      'ticker',
      '--input',
      'go',
      '--every',
      '3600',
      '--catch-up',
      'once',
      '--paused',
      '--json',
    ]);
    expect(created).toMatchObject({ code: 0 });
    expect(JSON.parse(created.stdout.trim())).toMatchObject({
      id: 'sync',
      everySeconds: 3600,
      catchUp: 'once',
      paused: true,
    });
    const listed = await ratchet(['schedules', 'list', '--tenant', TENANT]);
    expect(listed.stdout).toMatch(/sync +ticker +every 3600s +new +skip +once +paused/);
    expect(listed.stdout).toMatch(/every2 +ticker +every 2s +new +skip +skip +paused/);
    const resumed = await ratchet(['schedules', 'resume', 'sync', '--tenant', TENANT, '--json']);
    expect(JSON.parse(resumed.stdout.trim())).toMatchObject({
      id: 'sync',
      paused: false,
      nextDueAt: expect.any(String),
    });
    expect(await ratchet(['schedules', 'delete', 'sync', '--tenant', TENANT])).toMatchObject({ code: 0 });
    expect((await api('GET', '/v1/schedules/sync')).status).toBe(404);
  });

  it('a clock stepped 10 minutes forward catches up by the policy: one run for all the missed ticks', async () => {
    const created = await api('POST', '/v1/schedules', {
      id: 'catchup',
      agent: 'ticker',
      input: 'tick',
      everySeconds: 2,
      catchUp: 'once',
    });
    expect(created.status).toBe(201);
    await until('two ticks', async () => started(await ticks('catchup')).length >= 2);
    // Every orchestrator goes down between two ticks, its runs ended (a run still going at the outage would
    // make the catch-up tick overlap it, and be skipped: another case); one comes back ten minutes ahead.
    await until('the started ticks to have ended their runs', async () => {
      const [rows, runs] = [started(await ticks('catchup')), await runsOf('catchup')];
      return runs.length === rows.length && runs.every((r) => r.status === 'completed');
    });
    await stack.services.get('orchestrator-2')!.kill('SIGKILL');
    const before = await ticks('catchup');
    const last = before.at(-1)!;
    await stack.start('orchestrator', { ...tickerEnv, RATCHET_TEST_CLOCK_OFFSET_MS: '600000' }, 'orchestrator-3');
    await until('ticks decided by the stepped clock', async () =>
      (await ticks('catchup')).some((t) => t.decided_by === 'orchestrator-3' && t.action === 'start'),
    );
    const after = (await ticks('catchup')).filter((t) => t.decided_by === 'orchestrator-3');
    const first = after.filter((t) => t.decided_at === after[0]!.decided_at);
    // The first decision: one tick more than the grace late starts (the latest missed one) …
    const missed = first.filter((t) => Date.parse(t.decided_at) - Date.parse(t.tick_at) > GRACE_MS);
    expect(missed.map((t) => t.action)).toEqual(['start']);
    // … and it is the only run between the last tick before the outage and it (~300 ticks skipped) …
    const all = await ticks('catchup');
    const gap = all.filter((t) => t.tick_at > last.tick_at && t.tick_at < missed[0]!.tick_at);
    expect(gap).toEqual([]);
    expect(Date.parse(missed[0]!.tick_at) - Date.parse(last.tick_at)).toBeGreaterThan(500_000);
    // … while the on-time ticks beside it overlap its run and are skipped (overlap: skip).
    expect(first.filter((t) => !missed.includes(t)).every((t) => t.action === 'skip' && t.reason === 'overlap')).toBe(
      true,
    );
    await api('PATCH', '/v1/schedules/catchup', { paused: true });
    await expectOneRunPerStartedTick('catchup');
  });
});
