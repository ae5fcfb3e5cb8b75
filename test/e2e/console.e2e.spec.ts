import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ApiKeyRepository, openServiceDatabase, type Database } from '@ratchet/adapters';
import type { ApprovalView, UsageReport } from '@ratchet/contracts';
import { EffectService, runProcess, sourceCommand } from '@ratchet/testing';
import { gatewayHttp } from './gateway-http';
import { terminal, TestStack } from './stack';

/*
 * The operator's path end to end, with every API call going through a proxy that validates it against
 * docs/openapi.json: the CLI lists, refuses and decides approvals and cancels a run; the web console
 * (Debian's Chromium driven by Playwright) shows a run waiting for approval, approves it and follows the
 * run to its end live; a viewer sees the same timeline but cannot decide.
 * RATCHET_SCREENSHOTS=1 also writes the pages' screenshots to docs/console/.
 */

const TENANT = 'acme';
const AGENTS = path.resolve(__dirname, '../agents/approvals');
const ROOT = path.resolve(__dirname, '../..');
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
/** The validating proxy (openapi-proxy.ts) as a child process in front of the gateway. */
async function startProxy(target: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--conditions=ratchet-src', '-r', '@swc-node/register', path.join(__dirname, 'openapi-proxy.ts'), target],
    {
      cwd: ROOT,
      env: { ...process.env, SWC_NODE_PROJECT: path.join(ROOT, 'tsconfig.json') },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the OpenAPI proxy exited ${code}`)));
  });
  return { url, child };
}

const cliCommand = sourceCommand('apps/cli/src/main.ts');
const ratchet = (args: string[], env: Record<string, string>) =>
  runProcess(cliCommand.command, [...cliCommand.args, ...args], { ...cliCommand.env, ...env });
const jsonLines = <T = Record<string, unknown>>(text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);

const SHOTS = process.env['RATCHET_SCREENSHOTS'] === '1' ? path.join(ROOT, 'docs/console') : undefined;

describe('operator actions: the CLI and the web console, through a validating proxy', () => {
  let stack: TestStack;
  let gatewayDb: Database;
  let proxy: { url: string; child: ChildProcess };
  let browser: Browser;
  const effects = new EffectService();
  const keys = { runner: '', approver: '', viewer: '', otherTenant: '' };

  const http = gatewayHttp(() => proxy.url);
  const startRun = async (requestId: string, input: string, metadata?: Record<string, string>) => {
    const res = await http(
      'POST',
      '/v1/runs',
      keys.runner,
      { agent: 'pay', input, ...(metadata ? { metadata } : {}) },
      { 'Idempotency-Key': requestId },
    );
    expect(res.status).toBe(202);
    return res.body as { runId: string; threadId: string };
  };
  const pending = async (threadId: string): Promise<ApprovalView> => {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const res = await http('GET', `/v1/approvals?status=pending&threadId=${threadId}`, keys.approver);
      const [first] = (res.body as { approvals: ApprovalView[] }).approvals;
      if (first) return first;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no pending approval on ${threadId}`);
  };
  const until = async <T>(probe: () => Promise<T | undefined>): Promise<T> => {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const value = await probe();
      if (value !== undefined) return value;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('timed out waiting');
  };
  const cli = (args: string[], key: string) =>
    ratchet([...args, '--gateway', proxy.url, '--api-key', key], { DATABASE_URL: stack.testDb.url });
  const signIn = async (key: string): Promise<Page> => {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    await page.goto(`${proxy.url}/console/`);
    await page.fill('input[name=credential]', key);
    await page.click('button[type=submit]');
    await page.waitForSelector('nav');
    return page;
  };
  const shot = async (page: Page, name: string) => {
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  beforeAll(async () => {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-console.mjs')], { stdio: 'ignore' });
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
    stack = await TestStack.create();
    await effects.start();
    gatewayDb = await openServiceDatabase(stack.testDb.url, 'gateway');
    const repo = new ApiKeyRepository(gatewayDb.sql);
    keys.runner = (await repo.create({ tenantId: TENANT, name: 'runner', roles: ['runner'] })).secret;
    keys.approver = (await repo.create({ tenantId: TENANT, name: 'approver', roles: ['approver'] })).secret;
    keys.viewer = (await repo.create({ tenantId: TENANT, name: 'viewer', roles: ['viewer'] })).secret;
    keys.otherTenant = (await repo.create({ tenantId: 'globex', name: 'viewer', roles: ['viewer'] })).secret;
    const [, , , launched] = await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS }),
      stack.start('tool-executor', { RATCHET_DEMO_EFFECT_URL: effects.url }),
      stack.start('approvals'),
      chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      }),
    ]);
    browser = launched;
    const gateway = await stack.start('gateway');
    proxy = await startProxy(`http://127.0.0.1:${gateway.port}`);
  });

  afterAll(async () => {
    await browser?.close();
    proxy?.child.kill('SIGTERM');
    await stack?.stop();
    await gatewayDb?.close();
    await effects.stop();
  });

  it('lists, refuses and decides approvals, searches and cancels runs from the CLI', async () => {
    const decided = await startRun('cli-decided', 'big car');
    const approval = await pending(decided.threadId);

    const listed = await cli(
      ['approvals', 'list', '--status', 'pending', '--thread', decided.threadId, '--json'],
      keys.approver,
    );
    expect(listed.code).toBe(0);
    expect(jsonLines<ApprovalView>(listed.stdout).map((a) => [a.id, a.tool])).toEqual([
      [approval.id, 'demo.effect.charge'],
    ]);

    const refused = await cli(['approvals', 'approve', approval.id], keys.viewer);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/403.*needs the role approver/);

    const approved = await cli(['approvals', 'approve', approval.id, '--reason', 'checked', '--json'], keys.approver);
    expect(approved.code).toBe(0);
    expect(jsonLines<ApprovalView>(approved.stdout)[0]).toMatchObject({ status: 'granted' });
    const again = await cli(['approvals', 'reject', approval.id], keys.approver);
    expect([again.code, again.stderr]).toEqual([1, expect.stringMatching(/409/)]);
    expect((await stack.waitFor(TENANT, decided.threadId, terminal(decided.runId))).at(-1)?.type).toBe('run.completed');

    const cancelled = await startRun('cli-cancelled', 'big boat', { order: 'boat-7' });
    const orphan = await pending(cancelled.threadId);
    const cancel = await cli(['runs', 'cancel', cancelled.runId, '--reason', 'wrong boat'], keys.runner);
    expect(cancel.code).toBe(0);
    const events = await stack.waitFor(TENANT, cancelled.threadId, terminal(cancelled.runId));
    expect(events.at(-1)).toMatchObject({ type: 'run.cancelled', data: { reason: 'wrong boat' } });
    // The stopped run's approval leaves the inbox, closed as cancelled; deciding it is refused, saying why.
    const closed = await until(async () => {
      const res = await http('GET', `/v1/approvals/${orphan.id}`, keys.approver);
      const view = res.body as ApprovalView;
      return view.status === 'cancelled' ? view : undefined;
    });
    expect(closed).toMatchObject({ choices: [], decision: { decision: 'cancelled', by: 'system:run-stop' } });
    const late = await cli(['approvals', 'approve', orphan.id], keys.approver);
    expect([late.code, late.stderr]).toEqual([
      1,
      expect.stringMatching(/409: this approval was cancelled: its run \S+ stopped: wrong boat/),
    ]);

    // Runs search (GET /v1/runs): the tenant's runs by agent, start time, status and request metadata.
    const search = await cli(['runs', 'search', '--agent', 'pay', '--since', '1h', '--json'], keys.viewer);
    expect(search.code).toBe(0);
    const byRun = new Map(jsonLines<{ runId: string; status: string }>(search.stdout).map((r) => [r.runId, r.status]));
    expect([byRun.get(decided.runId), byRun.get(cancelled.runId)]).toEqual(['completed', 'cancelled']);
    const byMetadata = await cli(['runs', 'search', '--metadata', 'order=boat-7', '--json'], keys.viewer);
    expect(jsonLines<{ runId: string }>(byMetadata.stdout).map((r) => r.runId)).toEqual([cancelled.runId]);
    const failed = await cli(['runs', 'list', '--status', 'failed', '--json'], keys.viewer);
    expect([failed.code, failed.stdout]).toEqual([0, '']);
    // Pages: one run a page, the cursor leading to the other.
    const first = await http('GET', '/v1/runs?limit=1', keys.viewer);
    const firstPage = first.body as { runs: { runId: string }[]; nextCursor?: string };
    expect([first.status, firstPage.runs.length, typeof firstPage.nextCursor]).toEqual([200, 1, 'string']);
    const second = await http('GET', `/v1/runs?limit=1&cursor=${firstPage.nextCursor}`, keys.viewer);
    const secondRuns = (second.body as { runs: { runId: string }[] }).runs;
    expect(secondRuns).toHaveLength(1);
    expect(secondRuns[0]!.runId).not.toBe(firstPage.runs[0]!.runId);
    const bogus = await http('GET', '/v1/runs?cursor=not-a-cursor', keys.viewer);
    expect([bogus.status, bogus.body['detail']]).toEqual([400, expect.stringContaining('cursor')]);
    // Another tenant sees none of them.
    const other = await cli(['runs', 'list', '--json'], keys.otherTenant);
    expect([other.code, other.stdout]).toEqual([0, '']);
    const otherByAgent = await http('GET', '/v1/runs?agent=pay', keys.otherTenant);
    expect(otherByAgent).toEqual({ status: 200, body: { runs: [] } });
  });

  it('shows the waiting run in the console, approves it there and follows it to the end; a viewer cannot decide', async () => {
    const { runId, threadId } = await startRun('console', 'big piano');
    const approval = await pending(threadId);

    const viewer = await signIn(keys.viewer);
    await viewer.goto(`${proxy.url}/console/#/threads/${threadId}`);
    await viewer.waitForSelector('.call.waiting-for-approval');
    await viewer.click(`.decide[data-approval="${approval.id}"] button.approve`);
    await expect(viewer.locator('.decide .problem').textContent()).resolves.toMatch(
      /403 Forbidden: deciding this approval needs the role approver/,
    );

    const page = await signIn(keys.approver);
    await shot(page, 'threads');
    await page.goto(`${proxy.url}/console/#/threads/${threadId}`);
    const run = page.locator(`.run[data-run="${runId}"]`);
    await run.locator('.call.waiting-for-approval').waitFor();
    // The parallel call of the same step ran while the charge waited.
    await run.locator('.call.completed', { hasText: 'demo.weather' }).waitFor();
    expect(await run.locator('.step').first().locator('.call').count()).toBe(2);
    await expect(run.locator('.meta .trace, .meta a').textContent()).resolves.toMatch(/^[0-9a-f]{32}$/);
    await shot(page, 'timeline-waiting');

    // The runs page shows what the run waits for beside its status, and finds it by that.
    await page.goto(`${proxy.url}/console/#/runs`);
    await page.selectOption('select[name=waiting]', 'approval');
    const waitingRow = page.locator(`tr[data-run="${runId}"]`);
    await waitingRow.waitFor();
    await expect(waitingRow.locator('.status').textContent()).resolves.toBe('running');
    await expect(waitingRow.locator('.waiting').textContent()).resolves.toContain(
      `waits for an approval until ${approval.expiresAt}`,
    );

    await page.goto(`${proxy.url}/console/#/approvals`);
    await page.locator(`.inbox-item[data-approval="${approval.id}"]`).waitFor();
    await shot(page, 'approvals');
    await page.goto(`${proxy.url}/console/#/threads/${threadId}`);
    await run.locator(`.decide[data-approval="${approval.id}"] button.approve`).click();
    // Live: the grant, the charge and the answer arrive over the stream, without a reload.
    await run.locator('.status.completed').first().waitFor({ timeout: 30_000 });
    await expect(run.locator('.approval.granted').textContent()).resolves.toMatch(/granted .* by key:/);
    await expect(run.locator('.outcome').textContent()).resolves.toMatch(/^done:/);
    await shot(page, 'timeline-completed');
    expect(effects.arrivalsFor(runId)).toBe(1);

    await viewer.goto(`${proxy.url}/console/#/agents`);
    await viewer.locator('td', { hasText: 'pay' }).first().waitFor();
    await shot(viewer, 'agents');

    // Runs search: the completed run is listed under its status, and links to its thread.
    await viewer.goto(`${proxy.url}/console/#/runs`);
    await viewer.selectOption('select[name=status]', 'completed');
    const row = viewer.locator(`tr[data-run="${runId}"]`);
    await row.waitFor();
    await expect(row.locator('.status').textContent()).resolves.toBe('completed');
    await expect(row.locator(`a[href="#/threads/${threadId}"]`).count()).resolves.toBe(1);
    await shot(viewer, 'runs');
  });

  it('lists waitpoints in the console and completes one there; the inbox keeps to what waits for a human', async () => {
    const res = await http(
      'POST',
      '/v1/runs',
      keys.runner,
      { agent: 'wait-form', input: 'form-9' },
      { 'Idempotency-Key': 'console-waitpoint' },
    );
    expect(res.status).toBe(202);
    const { runId, threadId } = res.body as { runId: string; threadId: string };
    const waitpoint = await until(async () => {
      const list = await http('GET', `/v1/waitpoints?status=pending&threadId=${threadId}`, keys.runner);
      return (list.body as { waitpoints: ApprovalView[] }).waitpoints[0];
    });

    const page = await signIn(keys.runner);
    // The timeline shows the call waiting for its waitpoint, with the way to complete it.
    await page.goto(`${proxy.url}/console/#/threads/${threadId}`);
    await page.locator('.call.waiting-for-its-waitpoint').waitFor();
    await page.click('.call.waiting-for-its-waitpoint a.complete-link');
    const item = page.locator(`.inbox-item.waitpoint[data-waitpoint="${waitpoint.id}"]`);
    await item.waitFor();
    await expect(item.locator('.meta').first().textContent()).resolves.toContain(`expires ${waitpoint.expiresAt}`);
    // The inbox of what waits for a human does not list it.
    await page.goto(`${proxy.url}/console/#/approvals`);
    // Loaded (an item, or the note that nothing waits): then it is not among them.
    await page.locator('.inbox-item, p.hint').first().waitFor();
    expect(await page.locator(`.inbox-item[data-approval="${waitpoint.id}"]`).count()).toBe(0);

    await page.goto(`${proxy.url}/console/#/waitpoints`);
    await item.waitFor();
    // Not JSON: said by the form, nothing sent. Not the schema's shape: the gateway's problem, shown as it wrote it.
    await item.locator('textarea[name=result]').fill('{approvedBudget: 5');
    await item.locator('button.complete').click();
    await expect(item.locator('.problem').textContent()).resolves.toMatch(/^The result is not JSON/);
    await item.locator('textarea[name=result]').fill('{"approvedBudget": "lots"}');
    await item.locator('button.complete').click();
    await expect(item.locator('.problem').textContent()).resolves.toMatch(/^400 .*approvedBudget.*integer/);
    await shot(page, 'waitpoints');
    await item.locator('textarea[name=result]').fill('{"approvedBudget": 5000}');
    await item.locator('button.complete').click();
    // Completed: it leaves the pending list, and the run goes on with the result, once.
    await page.locator(`.inbox-item.waitpoint[data-waitpoint="${waitpoint.id}"]`).waitFor({ state: 'detached' });
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(events.filter((e) => e.type === 'waitpoint.completed')).toHaveLength(1);
    expect(events.find((e) => e.type === 'tool.completed')?.data).toMatchObject({ result: { approvedBudget: 5000 } });
    await page.selectOption('select[name=status]', 'completed');
    await expect(item.locator('.decision').textContent()).resolves.toMatch(/^completed by key:/);

    // A viewer sees the list, and the gateway refuses its completion, shown as it said it.
    const second = await http(
      'POST',
      '/v1/runs',
      keys.runner,
      { agent: 'wait-form', input: 'form-10' },
      { 'Idempotency-Key': 'console-waitpoint-viewer' },
    );
    const other = await until(async () => {
      const list = await http(
        'GET',
        `/v1/waitpoints?status=pending&threadId=${(second.body as { threadId: string }).threadId}`,
        keys.viewer,
      );
      return (list.body as { waitpoints: ApprovalView[] }).waitpoints[0];
    });
    const viewer = await signIn(keys.viewer);
    await viewer.goto(`${proxy.url}/console/#/waitpoints`);
    const viewed = viewer.locator(`.inbox-item.waitpoint[data-waitpoint="${other.id}"]`);
    await viewed.locator('textarea[name=result]').fill('{"approvedBudget": 1}');
    await viewed.locator('button.complete').click();
    await expect(viewed.locator('.problem').textContent()).resolves.toMatch(/^403 /);
  });

  it('settles an uncertain effect by its ledger key from the CLI', async () => {
    // An executor whose effect service is unreachable: the charge may have acted, so it is `uncertain`.
    await stack.services.get('tool-executor')?.kill('SIGKILL');
    await stack.start('tool-executor', { RATCHET_DEMO_EFFECT_URL: 'http://127.0.0.1:1/' });
    const { runId, threadId } = await startRun('cli-escalation', 'small vase');
    const escalation = await pending(threadId);
    expect(escalation).toMatchObject({ kind: 'escalation', idempotencyKey: expect.stringContaining(runId) });
    // The run waits for an operator: it says so beside its status, with no expiry of its own.
    const waiting = jsonLines<{ runId: string; status: string; waiting?: { on: string; until?: string } }>(
      (await cli(['runs', 'list', '--waiting', 'operator', '--json'], keys.viewer)).stdout,
    );
    expect(waiting.find((r) => r.runId === runId)).toMatchObject({ status: 'running', waiting: { on: 'operator' } });
    expect(waiting.find((r) => r.runId === runId)?.waiting?.until).toBeUndefined();

    const viewer = await cli(['effects', 'resolve', escalation.idempotencyKey!, '--did-not-happen'], keys.viewer);
    expect([viewer.code, viewer.stderr]).toEqual([1, expect.stringMatching(/403/)]);
    const resolved = await cli(
      [
        'effects',
        'resolve',
        escalation.idempotencyKey!,
        '--did-not-happen',
        '--reason',
        'no charge at the provider',
        '--json',
      ],
      keys.approver,
    );
    expect(resolved.code).toBe(0);
    expect(jsonLines<ApprovalView>(resolved.stdout)[0]).toMatchObject({ id: escalation.id, status: 'resolved' });
    const events = await stack.waitFor(TENANT, threadId, terminal(runId));
    expect(events.find((e) => e.type === 'tool.failed')?.data).toMatchObject({
      error: { code: 'effect.failed_by_human' },
    });
  });

  it('serves Prometheus metrics on every service', async () => {
    // The pending-approvals gauge has a series per tenant with approvals waiting: keep one waiting.
    await pending((await startRun('metrics', 'big lamp')).threadId);
    const scrape = async (name: string) => {
      const res = await fetch(`http://127.0.0.1:${stack.services.get(name)!.port}/metrics`);
      expect([name, res.status, res.headers.get('content-type')]).toEqual([
        name,
        200,
        expect.stringMatching(/^text\/plain/),
      ]);
      return res.text();
    };
    expect(await scrape('orchestrator')).toMatch(/^ratchet_runs_total\{.*\} \d+/m);
    expect(await scrape('tool-executor')).toMatch(/^ratchet_tool_duration_bucket\{/m);
    expect(await scrape('approvals')).toMatch(/^ratchet_approvals_pending\b/m);
    expect(await scrape('gateway')).toMatch(/^# HELP target_info/m);
  });

  it("shows the tenant's usage by day, agent and model as the API counts it; another tenant sees only its own", async () => {
    // Read once the figures are still (every run of the tests before has ended).
    const read = async (key: string, query = '') => {
      const res = await http('GET', `/v1/usage${query}`, key);
      expect(res.status).toBe(200);
      return res.body as UsageReport;
    };
    let report = await read(keys.viewer, '?by=day,agent,model');
    for (;;) {
      await new Promise((r) => setTimeout(r, 500));
      const again = await read(keys.viewer, '?by=day,agent,model');
      if (JSON.stringify(again) === JSON.stringify(report)) break;
      report = again;
    }
    expect(report.total.calls).toBeGreaterThan(0);
    // The demo's price table prices the scripted model.
    expect(report.total).toMatchObject({ unpricedCalls: 0 });
    expect(report.total.cost).toBeGreaterThan(0);
    const n = (v: number) => v.toLocaleString('en');
    const money = new Intl.NumberFormat('en', { minimumFractionDigits: 2, maximumFractionDigits: 6 });
    const cost = (f: UsageReport['total']) =>
      f.unpricedCalls === f.calls && f.calls > 0
        ? '-'
        : `${money.format(f.cost)}${f.unpricedCalls > 0 && f.unpricedCalls < f.calls ? '*' : ''}`;
    const page = await signIn(keys.viewer);
    await page.click('a[href="#/usage"]');
    await page.waitForSelector('table.usage tfoot tr.total');
    const cells = (selector: string) =>
      page.$$eval(selector, (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')),
      );
    expect(await cells('table.usage tbody tr')).toEqual(
      report.groups.map((g) => [
        g.day ?? '-',
        g.agent ?? '-',
        g.model ?? '-',
        n(g.calls),
        n(g.inputTokens),
        n(g.outputTokens),
        n(g.totalTokens),
        cost(g),
        g.abortedCalls > 0 ? n(g.abortedCalls) : '-',
      ]),
    );
    const t = report.total;
    expect(await cells('table.usage tfoot tr')).toEqual([
      [
        n(t.calls),
        n(t.inputTokens),
        n(t.outputTokens),
        n(t.totalTokens),
        cost(t),
        t.abortedCalls > 0 ? n(t.abortedCalls) : '-',
      ],
    ]);
    await shot(page, 'usage');
    // Grouped by model alone: one row per model, the same total.
    await page.uncheck('input[name=by-day]');
    await page.uncheck('input[name=by-agent]');
    const byModel = await read(keys.viewer, '?by=model');
    expect(byModel.total).toEqual(report.total);
    const models = byModel.groups.map((g) => g.model);
    await until(async () => {
      const shown = (await cells('table.usage tbody tr')).map((r) => r[0]);
      return JSON.stringify(shown) === JSON.stringify(models) ? true : undefined;
    });
    // Another tenant's console shows none of this tenant's calls.
    expect((await read(keys.otherTenant)).total.calls).toBe(0);
    const other = await signIn(keys.otherTenant);
    await other.goto(`${proxy.url}/console/#/usage`);
    await other.waitForSelector('table.usage tfoot tr.total');
    expect(await other.textContent('table.usage tfoot tr.total td')).toBe('0');
    await other.context().close();
    await page.context().close();
  });

  it('sent every request and got every answer as docs/openapi.json describes them', async () => {
    const found = (await (await fetch(`${proxy.url}/__openapi-proxy`)).json()) as {
      violations: string[];
      seen: string[];
    };
    expect(found.violations).toEqual([]);
    for (const op of [
      'Runs_create 202',
      'Approvals_list 200',
      'Approvals_decide 200',
      'Approvals_decide 403',
      'Approvals_decide 409',
      'Runs_cancel 202',
      'Runs_search 200',
      'Threads_events 200',
      'Agents_list 200',
      'Waitpoints_list 200',
      'Waitpoints_complete 200',
      'Waitpoints_complete 400',
      'Waitpoints_complete 403',
      'Usage_report 200',
    ])
      expect([op, found.seen.includes(op)]).toEqual([op, true]);
  });
});
