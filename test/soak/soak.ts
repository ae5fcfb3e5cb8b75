import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ApiKeyRepository,
  masterKeyFromFile,
  openServiceDatabase,
  PgThreadStore,
  type Database,
} from '@ratchet/adapters';
import type { ApprovalView, ThreadEvent } from '@ratchet/contracts';
import type { ThreadState } from '@ratchet/domain';
import { EffectService, FakeModelServer, freePort } from '@ratchet/testing';
import { seeded, sleep, Stack, TERMINAL_TYPES } from '../bench/harness';
import {
  eventLogInvariant,
  failedCallsRow,
  feedAndCanaryInvariants,
  nudgedRunsRow,
  openRunsDetail,
  projectionsInvariant,
  type Invariant,
} from '../chaos/chaos';
import { FaultLoop, resilient, singleBus, surviving, type Victim } from '../chaos/faults';
import { PrivatePostgres } from '../chaos/private-postgres';
import { ToolProcess } from '../e2e/tool-processes';

/*
 * The soak (`npm run soak`, and test/e2e/soak.e2e.spec.ts with a few short seeds): what a deployment
 * mixes, under the chaos driver's faults. Runs are started over the gateway's HTTP API with API keys and
 * Idempotency-Key (retried with the same key whenever the gateway or the bus is down); an OpenAI-compatible
 * fake model answers them (latency, 429s with Retry-After); they call remote tools (a NATS tool service)
 * and MCP tools (an MCP server), each a process of its own, and built-in effect tools behind approvals that
 * an approver grants, rejects or lets expire over HTTP; runs are queued on one thread, interrupted by a
 * newer request, cancelled over HTTP; effects cut mid-call escalate and the operator decides each
 * escalation over HTTP after checking the outside world. Meanwhile every service, the tool service and
 * the MCP server are SIGKILLed and restarted, nats-server is crashed and restarted, Postgres is crashed
 * and recovers, and messages are delayed. The far side (the effect service) counts every effect per key.
 */

export interface SoakOptions {
  seed: number;
  /** How long requests keep coming while the faults run (the faults go on until their minimum counts). */
  seconds: number;
  /** Requests per second while they come. Default 1.5. */
  rate?: number;
  /** At least this many SIGKILLs. Default max(4, seconds / 6). */
  minKills?: number;
  /** Appends each service's output to `<dir>/<instance>.log` when it exits. */
  serviceLogDir?: string;
  log?: (line: string) => void;
}

export interface SoakReport {
  seed: number;
  seconds: number;
  requests: number;
  /** Requests by scenario. */
  scenarios: Record<string, number>;
  /** HTTP requests sent again with the same key (no answer, 5xx, 409 in progress). */
  resent: number;
  /** Cancels answered 404 (the run's request accepted, not processed yet) and asked again. */
  cancelsBeforeKnown: number;
  /** Why they were sent again: no answer, a status (503), or `409 in progress` (a key held by a gateway that died). */
  resentBecause: Record<string, number>;
  actions: Record<string, number>;
  decisions: Record<string, number>;
  /** Effects the far side applied (charges and upserts). */
  effects: number;
  invariants: Invariant[];
  ok: boolean;
}

const TENANT = 'soak';
const CANARY = `canary-${Math.random().toString(36).slice(2)}-secret-never-persist`;

/** What a request asks for, and what the operator does with its approval. */
type Scenario = 'remote' | 'mcp' | 'approve' | 'reject' | 'expire' | 'queue' | 'interrupt' | 'cancel' | 'escalate';
const SCENARIOS: Array<[Scenario, number]> = [
  ['remote', 3],
  ['mcp', 3],
  ['approve', 2],
  ['reject', 1],
  ['expire', 1],
  ['queue', 1],
  ['interrupt', 1],
  ['cancel', 1],
  ['escalate', 1],
];

interface Request {
  key: string;
  scenario: Scenario;
  threadId: string;
  agent: string;
  input: string;
  concurrency: 'enqueue' | 'interrupt';
  /** Every runId the gateway answered for this key (one request: one run). */
  answered: Set<string>;
}

/**
 * The tenant's own agents with remote and MCP tools, registered over `POST /v1/agents` once the tool
 * executor's catalog offers their tools (a deployment's agents directory is checked when an orchestrator
 * starts, and would refuse to start one while a tool process is away).
 */
function tenantAgents(baseUrl: string): Array<Record<string, unknown>> {
  return (['fx', 'mfx'] as const).map((source) => ({
    name: source === 'fx' ? 'soak-remote' : 'soak-mcp',
    model: { provider: 'openai', name: 'fake-1', baseUrl },
    maxSteps: 4,
    stepTimeoutSeconds: 30,
    tools: ['read', 'upsert', 'charge'].map((t) => ({ name: `${source}.${t}` })),
  }));
}

/** The deployment's agents (built-in tools behind approvals), pointed at the fake model. */
function writeAgents(baseUrl: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ratchet-soak-agents-'));
  const agent = (name: string, tools: string) =>
    writeFileSync(
      path.join(dir, `${name}.yaml`),
      `name: ${name}\nmodel:\n  provider: openai\n  name: fake-1\n  baseUrl: ${baseUrl}\n` +
        `maxSteps: 4\nstepTimeoutSeconds: 30\ntools:\n${tools}`,
    );
  agent(
    'soak-approve',
    '  - name: demo.effect.upsert\n    approval: { when: always, role: approver, fourEyes: true, expiresInSeconds: 86400 }\n',
  );
  agent(
    'soak-expire',
    '  - name: demo.effect.charge\n    approval: { when: always, role: approver, expiresInSeconds: 3 }\n',
  );
  return dir;
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const t0 = Date.now();
  const write = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const log = (line: string) => write(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}`);
  if (options.serviceLogDir) mkdirSync(options.serviceLogDir, { recursive: true });
  const random = seeded(options.seed);
  const started = Date.now();
  const postgres = await PrivatePostgres.start();
  const bus = await singleBus();
  const far = new EffectService();
  await far.start();
  const model = new FakeModelServer();
  const agentsDir = writeAgents(await model.start());
  const [gatewayPort, mcpPort] = [await freePort(), await freePort()];
  const stack = await Stack.create({
    databaseServerUrl: postgres.url,
    natsUrl: bus.url,
    serviceNatsUrl: bus.serviceUrl,
    env: {
      AGENTS_DIR: agentsDir,
      RATCHET_DEMO_EFFECT_URL: far.url,
      RATCHET_ACK_WAIT_MS: '2000',
      // The provider's key is the canary: it is sent to the model and must reach no table and no stream.
      OPENAI_API_KEY: CANARY,
      RATCHET_CHAOS_SECRET: CANARY,
      REMOTE_DISCOVERY_INTERVAL_MS: '500',
      MCP_SERVERS: JSON.stringify([{ name: 'mfx', url: `http://127.0.0.1:${mcpPort}/mcp`, timeoutMs: 3000 }]),
      APPROVALS_SWEEP_INTERVAL_MS: '500',
      ...(options.serviceLogDir ? { LOG_LEVEL: 'debug' } : {}),
    },
  });
  const toolEnv = {
    NATS_URL: bus.serviceUrl,
    RATCHET_SUBJECT_PREFIX: stack.prefix.subject,
    EFFECT_URL: far.url,
    MCP_PORT: String(mcpPort),
  };
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  let stopping = false;
  const toolProcesses = new Map<string, ToolProcess>();
  try {
    // Services, each a victim: SIGKILLed by the fault loop and restarted until it is ready.
    const services: Array<[string, 'orchestrator' | 'tool-executor' | 'memory' | 'approvals' | 'gateway']> = [
      ['orchestrator-1', 'orchestrator'],
      ['orchestrator-2', 'orchestrator'],
      ['tools-1', 'tool-executor'],
      ['tools-2', 'tool-executor'],
      ['memory-1', 'memory'],
      ['approvals-1', 'approvals'],
      ['gateway-1', 'gateway'],
    ];
    const startService = async (instance: string, service: (typeof services)[number][1]) => {
      // The gateway keeps its port across restarts (the clients know one address); a gateway SIGKILLed while
      // answering holds the request's key for 15 s (the default 60 s would make every seed wait that long).
      const proc = await stack.start(
        service,
        instance,
        service === 'gateway' ? { GATEWAY_PORT: String(gatewayPort), GATEWAY_IDEMPOTENCY_HOLD_SECONDS: '15' } : {},
      );
      void proc.exited.then(({ code, signal }) => {
        if (options.serviceLogDir)
          writeFileSync(
            path.join(options.serviceLogDir, `${instance}.log`),
            `=== exited ${code} ${signal}\n${proc.logs}\n`,
            {
              flag: 'a',
            },
          );
        if (!stopping && signal !== 'SIGKILL')
          log(
            `soak: ${instance} exited by itself (code ${code}):\n${proc.logs.trim().split('\n').slice(-8).join('\n')}`,
          );
      });
    };
    const startTools = async (name: 'fx' | 'mfx') => {
      const p =
        name === 'fx'
          ? ToolProcess.ts('fx remote', 'test/fixtures/tool-services/effects.remote.ts', toolEnv)
          : ToolProcess.ts('fx mcp', 'test/fixtures/tool-services/effects.mcp.ts', toolEnv);
      toolProcesses.set(name, p);
      await p.waitForLog(name === 'fx' ? 'serving fx tools' : 'serving fx MCP', 60_000);
    };
    const retried = async (work: () => Promise<void>) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await work();
        } catch (error) {
          if (attempt >= 30) throw error;
          await sleep(300);
        }
      }
    };
    await Promise.all([startTools('fx'), startTools('mfx')]);
    await Promise.all(services.map(([i, s]) => startService(i, s)));
    const victims: Victim[] = [
      ...services.map(([instance, service]) => ({
        name: instance,
        kill: async () => void (await stack.services.get(instance)?.process.kill('SIGKILL')),
        restart: () => retried(() => startService(instance, service)),
      })),
      ...(['fx', 'mfx'] as const).map((name) => ({
        name: `${name}-tools`,
        kill: async () => void (await toolProcesses.get(name)?.kill('SIGKILL')),
        restart: () => retried(() => startTools(name)),
      })),
    ];

    // Credentials: a runner and an approver (four-eyes: never the runner), as API keys.
    const gatewayDb = resilient(await surviving(() => openServiceDatabase(stack.testDb.url, 'gateway', 2)));
    const keys = new ApiKeyRepository(gatewayDb.sql);
    const runner = await keys.create({ tenantId: TENANT, name: 'soak-runner', roles: ['runner'] });
    const runnerKey = runner.secret;
    /** The runner's own memory tree, and what it wrote there (read back after the faults). */
    const memoryTree = encodeURIComponent(`users/key.${runner.key.id}`);
    const written = new Map<string, unknown>();
    const approverKey = (await keys.create({ tenantId: TENANT, name: 'soak-approver', roles: ['approver'] })).secret;
    const adminKey = (await keys.create({ tenantId: TENANT, name: 'soak-admin', roles: ['admin'] })).secret;
    await gatewayDb.close();
    const http = new Http(gatewayUrl);
    for (const definition of tenantAgents(model.url)) {
      const deadline = Date.now() + 60_000;
      for (let attempt = 1; ; attempt++) {
        // A key per attempt: a refused request's answer is kept for its key.
        const key = `agent-${String(definition['name'])}-${attempt}`;
        const res = await http.send('POST', '/v1/agents', adminKey, definition, key);
        if (res.status === 201 || res.status === 200) break;
        // 400 unknown tools: the executors have not found the tool processes yet.
        if (Date.now() > deadline) throw new Error(`POST /v1/agents: ${res.status} ${JSON.stringify(res.body)}`);
        await sleep(500);
      }
    }
    log(`soak: seed ${options.seed}, ${options.seconds} s of requests, services and tool processes up`);

    const faults = new FaultLoop({
      random,
      bus,
      postgres,
      victims,
      minKills: options.minKills ?? Math.max(4, Math.round(options.seconds / 6)),
      natsRestarts: true,
      minNatsRestarts: 1,
      postgresRestarts: true,
      minPostgresRestarts: 1,
      log,
    });

    // The approver and the operator, over HTTP.
    const operator = new Operator(http, approverKey, far);
    let operating = true;
    const operatorLoop = (async () => {
      while (operating) {
        await operator.decide();
        await sleep(500);
      }
    })();

    // The requests: a scenario each, at `rate` per second, for `seconds`.
    const requests: Request[] = [];
    const sending: Array<Promise<unknown>> = [];
    const until = Date.now() + options.seconds * 1000;
    const rate = options.rate ?? 1.5;
    const total = SCENARIOS.reduce((a, [, w]) => a + w, 0);
    for (let n = 0; Date.now() < until; n++) {
      let roll = random() * total;
      const scenario = SCENARIOS.find(([, w]) => (roll -= w) < 0)?.[0] ?? 'remote';
      const item = `item-${options.seed}-${n}`;
      // One in six model calls first answers 429 with Retry-After, like a provider over its rate limit.
      const limit = random() < 0.17 ? ' [rate_limit=1] [retry_after=1]' : '';
      const make = (suffix: string, agent: string, input: string, concurrency: Request['concurrency'] = 'enqueue') => {
        const r: Request = {
          key: `soak-${options.seed}-${n}${suffix}`,
          scenario,
          threadId: `soak-${options.seed}-${n}`,
          agent,
          input: `${input}${limit}`,
          concurrency,
          answered: new Set(),
        };
        requests.push(r);
        operator.scenarioOf.set(r.threadId, scenario);
        return r;
      };
      const kind = ['read', 'upsert', 'charge'][Math.floor(random() * 3)]!;
      switch (scenario) {
        case 'remote':
        case 'mcp': {
          const tool = `${scenario === 'remote' ? 'fx' : 'mfx'}.${kind}`;
          sending.push(
            http.startRun(make('', `soak-${scenario}`, `[call=${tool}] [item=${item}] [parallel=2]`), runnerKey),
          );
          break;
        }
        case 'approve':
        case 'reject':
          sending.push(http.startRun(make('', 'soak-approve', `[call=demo.effect.upsert] [item=${item}]`), runnerKey));
          break;
        case 'expire':
          sending.push(http.startRun(make('', 'soak-expire', `[call=demo.effect.charge] [item=${item}]`), runnerKey));
          break;
        case 'escalate': {
          // A charge whose answer comes after the tool's timeout (the far side applied it): the executor
          // cannot tell whether it acted, so an operator decides, over HTTP, once the faults are over.
          const [source, wait] = random() < 0.5 ? ['fx', 3000] : ['mfx', 5000];
          const agent = source === 'fx' ? 'soak-remote' : 'soak-mcp';
          sending.push(http.startRun(make('', agent, `[call=${source}.charge] [item=wait${wait}-${item}]`), runnerKey));
          break;
        }
        case 'queue': {
          // Three runs on one thread, each queued behind the one before.
          const runs = ['a', 'b', 'c'].map((s) =>
            make(`-${s}`, 'soak-remote', `[call=fx.${kind}] [item=${item}-${s}] [latency=300]`),
          );
          sending.push(
            (async () => {
              for (const r of runs) await http.startRun(r, runnerKey);
            })(),
          );
          break;
        }
        case 'interrupt': {
          // A slow run, then a newer request on its thread that interrupts it.
          const first = make('-a', 'soak-mcp', `[call=mfx.${kind}] [item=${item}-a] [latency=1500]`);
          const second = make('-b', 'soak-mcp', `[call=mfx.read] [item=${item}-b]`, 'interrupt');
          const wait = 300 + random() * 1500;
          sending.push(
            (async () => {
              await http.startRun(first, runnerKey);
              await sleep(wait);
              await http.startRun(second, runnerKey);
            })(),
          );
          break;
        }
        case 'cancel': {
          // A slow run cancelled over HTTP while it works (or after it ended: 409, and it stays as it ended).
          const r = make('', 'soak-remote', `[call=fx.${kind}] [item=${item}] [latency=1200]`);
          const wait = 200 + random() * 2000;
          sending.push(
            (async () => {
              const runId = await http.startRun(r, runnerKey);
              await sleep(wait);
              await http.cancel(runId, runnerKey, `cancel-${r.key}`);
            })(),
          );
          break;
        }
        default: {
          const unknown: never = scenario;
          throw new Error(`unknown scenario ${String(unknown)}`);
        }
      }
      if (random() < 0.35) {
        // Beside a third of the requests, a memory item written over HTTP (gateway → memory service →
        // Postgres), twice: the second value is the one that must be there after the faults.
        const url = `/v1/memory/items/${memoryTree}/${item}`;
        sending.push(
          (async () => {
            for (const version of [1, 2]) {
              const res = await http.send('PUT', url, runnerKey, { value: { item, version } });
              if (res.status !== 200 && res.status !== 201)
                throw new Error(`PUT ${url}: ${res.status} ${JSON.stringify(res.body)}`);
            }
            written.set(url, { item, version: 2 });
          })(),
        );
      }
      await sleep((1000 / rate) * (0.5 + random()));
    }
    log(`soak: ${requests.length} requests made; waiting for the faults to reach their minimum counts`);
    await faults.stop();
    log('soak: faults stopped; bringing back what is down');
    for (const v of victims) {
      const alive = v.name.endsWith('-tools')
        ? toolProcesses.get(v.name.replace('-tools', ''))
        : stack.services.get(v.name)?.process;
      if (!alive || (await Promise.race([alive.exited.then(() => true), sleep(10).then(() => false)])))
        await faults.restart(v);
    }
    log('soak: everything up; waiting for the last requests to be answered');
    await Promise.all(sending);
    log(`soak: faults stopped after ${JSON.stringify(faults.actions)} (SIGKILLs: ${JSON.stringify(faults.killed)})`);

    // After the faults: every run must end within the bound; the operator goes on deciding, and now
    // answers escalations too (it checks the outside world first).
    operator.escalations = true;
    const db = resilient(
      await surviving(() =>
        openServiceDatabase(stack.testDb.url, 'orchestrator', 4, masterKeyFromFile(process.env['RATCHET_KEY_FILE'])),
      ),
    );
    const tools = resilient(await surviving(() => openServiceDatabase(stack.testDb.url, 'tools', 2)));
    const runIds = [...new Set(requests.flatMap((r) => [...r.answered]))];
    const bound = Date.now() + 150_000;
    let open = runIds.length;
    while (Date.now() < bound) {
      const rows = await db.sql.query<{ run_id: string }>(
        `select distinct run_id from ${db.sql.table('thread_events')} where tenant_id = ? and type in ('run.completed','run.failed','run.cancelled')`,
        [TENANT],
      );
      const ended = new Set(rows.map((r) => r.run_id));
      open = runIds.filter((id) => !ended.has(id)).length;
      if (open === 0) break;
      await sleep(500);
    }
    log(`soak: ${runIds.length - open} / ${runIds.length} runs ended; checking`);
    operating = false;
    await operatorLoop;
    // Quiesce: every outbox row published (the feed check needs it).
    for (const sql of [db.sql, tools.sql]) {
      const quiet = Date.now() + 30_000;
      while (Date.now() < quiet) {
        const [row] = await sql.query<{ n: number }>(
          `select count(*)::int as n from ${sql.table('outbox')} where sent_at is null`,
        );
        if ((row?.n ?? 0) === 0) break;
        await sleep(300);
      }
    }
    // Every memory write that was answered is there, with its last value.
    let readBack = 0;
    const lostWrites: string[] = [];
    for (const [url, value] of written) {
      const res = await http.send('GET', url, runnerKey);
      const stored = (res.body['item'] as { value?: unknown } | undefined)?.value;
      if (res.status === 200 && JSON.stringify(stored) === JSON.stringify(value)) readBack++;
      else lostWrites.push(`${url}: ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`);
    }
    const approvalsDb = resilient(await surviving(() => openServiceDatabase(stack.testDb.url, 'approvals', 2)));
    const invariants = await check(stack, db, tools, approvalsDb, requests, far, operator);
    invariants.splice(4, 0, {
      name: 'memory writes answered / read back with their last value',
      value: `${readBack} / ${written.size}${lostWrites.length ? `; not: ${lostWrites.join(' | ')}` : ''}`,
      ok: written.size > 0 && readBack === written.size,
    });
    await Promise.all([db.close(), tools.close(), approvalsDb.close()]);
    const scenarios: Record<string, number> = {};
    for (const r of requests) scenarios[r.scenario] = (scenarios[r.scenario] ?? 0) + 1;
    return {
      seed: options.seed,
      seconds: Math.round((Date.now() - started) / 100) / 10,
      requests: requests.length,
      scenarios,
      resent: http.resent,
      cancelsBeforeKnown: http.notYetKnown,
      resentBecause: http.why,
      actions: faults.actions,
      decisions: operator.decisions,
      effects: [...far.effects.values()].reduce((a, b) => a + b, 0),
      invariants,
      ok: invariants.every((i) => i.ok),
    };
  } finally {
    stopping = true;
    await stack.stop();
    await Promise.all([...toolProcesses.values()].map((p) => p.kill('SIGKILL')));
    await model.stop();
    await far.stop();
    await bus.stop();
    await postgres.stop();
    rmSync(agentsDir, { recursive: true, force: true });
  }
}

/** The gateway's HTTP API as a client with retries uses it: the same Idempotency-Key until it is answered. */
class Http {
  resent = 0;
  /** Cancels answered 404 because the run's request was accepted but not processed yet. */
  notYetKnown = 0;
  /** Why requests were sent again: no answer, a status, or `409 in progress`. */
  readonly why: Record<string, number> = {};
  constructor(private readonly base: string) {}

  async send(
    method: string,
    url: string,
    key: string,
    body?: unknown,
    idempotencyKey?: string,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) this.resent++;
      if (attempt > 600) throw new Error(`${method} ${url}: no answer after ${attempt} tries`);
      try {
        const res = await fetch(`${this.base}${url}`, {
          method,
          headers: {
            authorization: `Bearer ${key}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        const parsed = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
        // Down, overloaded or still answering the same key: the same request again (safe with the key).
        const inProgress = res.status === 409 && parsed['code'] === 'request.in_progress';
        if (res.status >= 500 || res.status === 429 || inProgress) {
          const why = inProgress ? '409 in progress' : String(res.status);
          this.why[why] = (this.why[why] ?? 0) + 1;
          // As a well-behaved client: after the Retry-After the answer gives (at most 15 s), else 300 ms.
          const after = Number(res.headers.get('retry-after') ?? 0);
          await sleep(after > 0 ? Math.min(after, 15) * 1000 : 300);
          continue;
        }
        return { status: res.status, body: parsed };
      } catch {
        this.why['no answer'] = (this.why['no answer'] ?? 0) + 1;
        await sleep(300); // no answer: the gateway (or what it needs) is down
      }
    }
  }

  /** Starts the request's run; resolves with its runId. */
  async startRun(r: Request, key: string): Promise<string> {
    const res = await this.send(
      'POST',
      '/v1/runs',
      key,
      { agent: r.agent, input: r.input, threadId: r.threadId, concurrency: r.concurrency },
      r.key,
    );
    if (res.status !== 202) throw new Error(`POST /v1/runs ${r.key}: ${res.status} ${JSON.stringify(res.body)}`);
    const runId = String(res.body['runId']);
    r.answered.add(runId);
    return runId;
  }

  /**
   * Cancels a run. A run whose request was accepted but not processed yet (the orchestrators were down)
   * is not known yet: 404, as for `GET /v1/runs/{id}` (docs/api.md); the client asks again (a new key per
   * try: an answer is kept for its key).
   */
  async cancel(runId: string, key: string, idempotencyKey: string): Promise<void> {
    const deadline = Date.now() + 120_000;
    for (let attempt = 1; ; attempt++) {
      const res = await this.send(
        'POST',
        `/v1/runs/${runId}/cancel`,
        key,
        { reason: 'soak: the user gave up' },
        `${idempotencyKey}-${attempt}`,
      );
      if (res.status === 202 || res.status === 409) return;
      if (res.status !== 404 || Date.now() > deadline)
        throw new Error(`POST /v1/runs/${runId}/cancel: ${res.status} ${JSON.stringify(res.body)}`);
      this.notYetKnown++;
      await sleep(500);
    }
  }
}

/**
 * The approver and the operator over HTTP: grants the approvals of `approve` threads, rejects those of
 * `reject` threads, leaves `expire` ones to expire; once `escalations` is set, decides each escalation
 * as `happened` (with the result) when the far side saw the key, else `fail`.
 */
class Operator {
  readonly scenarioOf = new Map<string, Scenario>();
  readonly decisions: Record<string, number> = { approve: 0, reject: 0, happened: 0, fail: 0 };
  /** What the operator decided, by approval id. */
  readonly decided = new Map<string, string>();
  escalations = false;

  constructor(
    private readonly http: Http,
    private readonly key: string,
    private readonly far: EffectService,
  ) {}

  async decide(): Promise<void> {
    let list: ApprovalView[];
    try {
      const res = await this.http.send('GET', '/v1/approvals?status=pending&limit=200', this.key);
      list = (res.body['approvals'] as ApprovalView[] | undefined) ?? [];
    } catch {
      return;
    }
    for (const a of list) {
      if (this.decided.has(a.id)) continue;
      let body: Record<string, unknown> | undefined;
      if (a.kind === 'escalation') {
        if (!this.escalations) continue;
        const happened = (this.far.effects.get(a.idempotencyKey ?? '') ?? 0) > 0;
        body = happened
          ? { decision: 'happened', reason: 'the far side has it', result: { effect: `${a.idempotencyKey}#1` } }
          : { decision: 'fail', reason: 'the far side never saw it' };
      } else {
        const scenario = this.scenarioOf.get(a.threadId);
        if (scenario === 'approve') body = { decision: 'approve', reason: 'soak: checked' };
        else if (scenario === 'reject') body = { decision: 'reject', reason: 'soak: not this one' };
        else continue; // `expire`: nobody decides
      }
      const res = await this.http.send('POST', `/v1/approvals/${a.id}/decision`, this.key, body, `decide-${a.id}`);
      // 409: decided already (an earlier try of ours whose answer was lost, or it expired meanwhile).
      if (res.status === 200 || res.status === 409) {
        const decision = String(body['decision']);
        this.decided.set(a.id, decision);
        if (res.status === 200) this.decisions[decision] = (this.decisions[decision] ?? 0) + 1;
      } else {
        throw new Error(`decision on ${a.id}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
  }
}

async function check(
  stack: Stack,
  db: Database,
  tools: Database,
  approvalsDb: Database,
  requests: readonly Request[],
  far: EffectService,
  operator: Operator,
): Promise<Invariant[]> {
  const out: Invariant[] = [];
  const store = new PgThreadStore<ThreadState>(db, () => ({ status: '', agent: null, activeRunId: null }));
  const logs = new Map<string, ThreadEvent[]>();
  for (const t of new Set(requests.map((r) => r.threadId))) logs.set(t, await store.readEvents(TENANT, t));
  const all = [...logs.values()].flat();

  // One request, one run: every answer for a key named one run, and the log has exactly the runs asked for.
  const runOf = new Map<string, string>();
  let split = 0;
  for (const r of requests) {
    if (r.answered.size !== 1) split++;
    for (const id of r.answered) runOf.set(id, r.key);
  }
  const logged = new Set(all.map((e) => e.runId).filter((id): id is string => typeof id === 'string'));
  const unasked = [...logged].filter((id) => !runOf.has(id)).length;
  const missing = [...runOf.keys()].filter((id) => !logged.has(id)).length;
  out.push({
    name: 'one run per request',
    value: `${requests.length} requests, ${runOf.size} runs answered, ${split} keys answered with other than one run, ${unasked} runs nobody asked for, ${missing} never logged`,
    ok: split === 0 && unasked === 0 && missing === 0 && runOf.size === requests.length,
  });

  // Every run ended within the bound after the faults stopped (its waits were all decided or expired).
  const ended = new Set(all.filter((e) => TERMINAL_TYPES.has(e.type)).map((e) => e.runId));
  const by = (type: string) => new Set(all.filter((e) => e.type === type).map((e) => e.runId));
  const [completed, cancelled, failed] = [by('run.completed'), by('run.cancelled'), by('run.failed')];
  const runs = [...runOf.keys()].map((runId) => ({
    runId,
    threadId: requests.find((r) => r.answered.has(runId))!.threadId,
  }));
  const open = runs.filter((r) => !ended.has(r.runId));
  out.push({
    name: 'runs ended / runs requested',
    value:
      `${runs.length - open.length} / ${runs.length} (completed ${runs.filter((r) => completed.has(r.runId)).length}, ` +
      `cancelled ${runs.filter((r) => cancelled.has(r.runId)).length}, failed ${runs.filter((r) => failed.has(r.runId)).length})` +
      (open.length ? `; open: ${await openRunsDetail(runs, logs, ended, [db, tools, approvalsDb])}` : ''),
    ok: open.length === 0,
  });

  out.push(eventLogInvariant(logs));

  // Effects: at most one per key at the far side, for every tool with an effect.
  const ledger = await tools.sql.query<{ key: string; tool: string; kind: string; state: string }>(
    `select key, tool, kind, state from ${tools.sql.table('effects')} where tenant_id = ? and kind <> 'pure'`,
    [TENANT],
  );
  const doubled = ledger.filter((row) => (far.effects.get(row.key) ?? 0) > 1);
  const applied = ledger.reduce((a, row) => a + (far.effects.get(row.key) ?? 0), 0);
  out.push({
    name: 'duplicate effects (idempotent and at-most-once calls)',
    value: `${doubled.length} keys applied more than once (${ledger.length} calls with an effect, ${applied} effects applied${doubled.length ? `; ${doubled.map((d) => `${d.tool} ${d.key}`).join(', ')}` : ''})`,
    ok: doubled.length === 0,
  });

  // Approvals: each decided as the operator decided it (or expired when nobody did); a granted call ran
  // once, a rejected or expired one never acted.
  // The far side counts a call's effects by its idempotency key, which the log's tool.requested names.
  const keyOf = new Map<string, string>();
  for (const e of all) {
    const d = e.data as { callId?: string; idempotencyKey?: string };
    if (e.type === 'tool.requested' && d.idempotencyKey) keyOf.set(`${e.runId}/${d.callId}`, d.idempotencyKey);
  }
  const rows = await approvalsDb.sql.query<{
    id: string;
    thread_id: string;
    run_id: string;
    call_id: string;
    kind: string;
    idempotency_key: string | null;
    status: string;
    decision: string | null;
  }>(
    `select a.id, a.thread_id, a.run_id, a.call_id, a.kind, a.idempotency_key, a.status, d.decision
     from ${approvalsDb.sql.table('approvals')} a
     left join ${approvalsDb.sql.table('decisions')} d on d.tenant_id = a.tenant_id and d.approval_id = a.id
     where a.tenant_id = ?`,
    [TENANT],
  );
  const expect: Record<string, string> = { approve: 'granted', reject: 'rejected', expire: 'expired' };
  let asDecided = 0;
  let wrong = 0;
  let actedWhenRefused = 0;
  let grantedNotOnce = 0;
  const tally: Record<string, number> = {};
  for (const a of rows.filter((x) => x.kind === 'tool')) {
    const scenario = operator.scenarioOf.get(a.thread_id);
    tally[a.status] = (tally[a.status] ?? 0) + 1;
    const effects = far.effects.get(keyOf.get(`${a.run_id}/${a.call_id}`) ?? '') ?? 0;
    // A run cancelled or interrupted meanwhile closes its approval as `cancelled`: allowed for any scenario.
    if (a.status === expect[scenario ?? ''] || a.status === 'cancelled') asDecided++;
    else wrong++;
    if (a.status !== 'granted' && effects > 0) actedWhenRefused++;
    if (a.status === 'granted' && effects !== 1) grantedNotOnce++;
  }
  out.push({
    name: 'approvals decided as the approver decided (granted ran once, refused never acted)',
    value:
      `${asDecided} / ${rows.filter((x) => x.kind === 'tool').length} as decided (${JSON.stringify(tally)}); ` +
      `${wrong} otherwise, ${actedWhenRefused} refused that acted, ${grantedNotOnce} granted not applied exactly once`,
    ok: wrong === 0 && actedWhenRefused === 0 && grantedNotOnce === 0,
  });
  // Escalations: each decided over HTTP, and as the far side says (happened: applied once; fail: never).
  const escalations = rows.filter((x) => x.kind === 'escalation');
  const undecided = escalations.filter((e) => e.status === 'pending').length;
  const against = escalations.filter((e) => {
    const n = far.effects.get(e.idempotency_key ?? '') ?? 0;
    return (e.decision === 'happened' && n !== 1) || (e.decision === 'fail' && n !== 0);
  }).length;
  const byDecision: Record<string, number> = {};
  for (const e of escalations) byDecision[e.decision ?? e.status] = (byDecision[e.decision ?? e.status] ?? 0) + 1;
  out.push({
    name: 'escalations decided over HTTP, as the far side says',
    value: `${escalations.length - undecided} / ${escalations.length} decided (${JSON.stringify(byDecision)}); ${against} against the far side`,
    ok: undecided === 0 && against === 0,
  });

  // Not an invariant: why runs failed (a model that kept failing, a budget), grouped by code.
  const why = new Map<string, number>();
  for (const e of all.filter((x) => x.type === 'run.failed')) {
    const d = e.data as { error?: { code?: string; message?: string }; budget?: string };
    const k = `${d.error?.code ?? '?'}${d.budget ? ` (${d.budget})` : ''}: ${(d.error?.message ?? '').slice(0, 100)}`;
    why.set(k, (why.get(k) ?? 0) + 1);
  }
  out.push({
    name: 'runs failed, by reason (not an invariant)',
    value: why.size ? [...why].map(([k, n]) => `${n} × ${k}`).join(' | ') : '0',
    ok: true,
  });
  out.push(failedCallsRow(all));
  out.push(await nudgedRunsRow(logs, tools, TENANT));
  out.push(await projectionsInvariant(store, TENANT, logs));
  out.push(...(await feedAndCanaryInvariants(stack, db, all, CANARY)));
  return out;
}
