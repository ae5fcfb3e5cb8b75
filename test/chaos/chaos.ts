import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  declareTopology,
  masterKeyFromFile,
  openServiceDatabase,
  PgThreadStore,
  type Database,
} from '@ratchet/adapters';

/** The services seal content with the key file they are given (RATCHET_KEY_FILE): the checks open it so. */
const masterKey = () => masterKeyFromFile(process.env['RATCHET_KEY_FILE']);
import {
  ApprovalsReply,
  approvalsSubjects,
  feedEvents,
  type ApprovalsRequestInput,
  type ThreadEvent,
  type ToolResolveCommand,
} from '@ratchet/contracts';
import { diffProjections, foldRecord, recordFrom, type ThreadState } from '@ratchet/domain';
import { runIdFor } from '@ratchet/platform';
import { EffectService } from '@ratchet/testing';
import { seeded, sleep, Stack, TERMINAL_TYPES } from '../bench/harness';
import { clusterBus, FaultLoop, resilient, singleBus, surviving, type Victim } from './faults';
import { PrivatePostgres } from './private-postgres';

/*
 * The chaos driver (`npm run chaos`, and test/e2e/chaos.e2e.spec.ts with ~30 runs). Starts the services
 * as processes on a private nats-server (behind a TCP proxy that can delay traffic) and a private
 * Postgres, and drives N runs of the chaos agent (parallel calls of every tool kind, durable memory, two
 * steps) while it SIGKILLs random services at random moments and restarts them, SIGKILLs and restarts the
 * nats-server, SIGKILLs and restarts Postgres (which then runs crash recovery), and delays messages. Every
 * run's upsert call waits for an approval (four-eyes): the driver grants it like an operator, over the
 * approvals API on NATS, as a principal other than the requester, during the chaos and after it (the
 * orchestrator re-checks each grant with the gateway and the approvals service, which are killed too). An
 * at-most-once call that was cut mid-effect escalates (effect.uncertain); the driver then answers like an
 * operator who checked the outside world (tool.resolve). Then it checks the invariants.
 */

export interface ChaosOptions {
  runs: number;
  seed: number;
  /** Runs per thread (enqueued behind each other). Default 4. */
  runsPerThread?: number;
  /** SIGKILLs at least this many times before the chaos stops. Default max(6, runs / 10). */
  minKills?: number;
  /** Restart the (private) nats-server during the chaos (in cluster mode: one node at a time). Default true. */
  natsRestarts?: boolean;
  /**
   * Run on a 3-node JetStream cluster on loopback (streams R3) instead of one nats-server: the NATS fault
   * is then a SIGKILL of a random node (at times the stream leader's), brought back on its ports with its
   * store. No delay bursts (the delay proxy fronts a single server). Default false.
   */
  cluster?: boolean;
  /** Crash and restart the (private) Postgres during the chaos. Default true. */
  postgresRestarts?: boolean;
  /** The chaos goes on until Postgres was restarted at least this often (when enabled). Default 1. */
  minPostgresRestarts?: number;
  /** The chaos goes on until NATS lost a server (a node) at least this often (when enabled). Default: 1 in cluster mode, else 0. */
  minNatsRestarts?: number;
  /** Appends each service's output to `<dir>/<instance>.log` when the process exits (for diagnosis). */
  serviceLogDir?: string;
  log?: (line: string) => void;
}

export interface Invariant {
  name: string;
  value: string;
  ok: boolean;
}

export interface ChaosReport {
  seed: number;
  runs: number;
  actions: Record<string, number>;
  escalated: number;
  /** Approvals the driver granted as the operator. */
  approved: number;
  seconds: number;
  invariants: Invariant[];
  ok: boolean;
}

const TENANT = 'chaos';
const CANARY = `canary-${Math.random().toString(36).slice(2)}-secret-never-persist`;
const AGENTS_DIR = path.resolve(__dirname, 'agents');
/** Who starts the runs, and who decides their approvals (four-eyes: never the same principal). */
const RUNNER = { id: 'chaos', roles: ['runner'] };
const APPROVER = { id: 'chaos-approver', roles: ['approver'] };
/** The chaos agent's call that waits for an approval. */
const APPROVED_TOOL = 'demo.effect.upsert';

/**
 * The approver: lists the tenant's pending approvals over the approvals API (`<prefix>.approvals.api`,
 * request/reply, the way the gateway relays an approver's HTTP calls) and grants each tool approval as
 * APPROVER, who holds the deciding role and is not the run's principal (four-eyes). Counts what it granted.
 */
class ApprovalsOperator {
  readonly granted = new Set<string>();
  /** Decisions sent without an answer (the approvals service or nats-server died): asked again with `get`. */
  private readonly unanswered = new Set<string>();
  private readonly subject: string;

  constructor(private readonly stack: Stack) {
    this.subject = approvalsSubjects(stack.prefix.subject).api;
  }

  async grantPending(): Promise<void> {
    await this.reconcile();
    const list = await this.ask({ op: 'list', tenantId: TENANT, principal: APPROVER, status: 'pending', limit: 500 });
    if (!list?.ok || !('approvals' in list)) return;
    for (const a of list.approvals) {
      if (a.kind !== 'tool' || a.requestedBy === APPROVER.id || this.granted.has(a.id)) continue;
      const reply = await this.ask({
        op: 'decide',
        tenantId: TENANT,
        principal: APPROVER,
        approvalId: a.id,
        decision: 'approve',
        reason: 'chaos operator: approved',
      });
      if (reply?.ok && 'approval' in reply) this.granted.add(a.id);
      else this.unanswered.add(a.id); // no answer, or a conflict: whose decision it is, `get` tells
    }
  }

  /** Counts the decisions sent without an answer that were recorded as ours after all. */
  async reconcile(): Promise<void> {
    for (const id of this.unanswered) {
      const reply = await this.ask({ op: 'get', tenantId: TENANT, principal: APPROVER, approvalId: id });
      if (!reply?.ok || !('approval' in reply)) continue;
      this.unanswered.delete(id);
      if (reply.approval.status === 'granted' && reply.approval.decision?.by === APPROVER.id) this.granted.add(id);
    }
  }

  /** One request; undefined when nobody answers (the approvals service or nats-server is down). */
  private async ask(body: ApprovalsRequestInput): Promise<ApprovalsReply | undefined> {
    try {
      const msg = await this.stack.nc.request(this.subject, JSON.stringify(body), { timeout: 3000 });
      return ApprovalsReply.parse(JSON.parse(new TextDecoder().decode(msg.data)));
    } catch {
      return undefined;
    }
  }
}

type Instance = 'orchestrator-1' | 'orchestrator-2' | 'tools-1' | 'tools-2' | 'memory-1' | 'approvals-1' | 'gateway-1';
type Service = 'orchestrator' | 'tool-executor' | 'memory' | 'approvals' | 'gateway';
const INSTANCES: Array<[Instance, Service]> = [
  ['orchestrator-1', 'orchestrator'],
  ['orchestrator-2', 'orchestrator'],
  ['tools-1', 'tool-executor'],
  ['tools-2', 'tool-executor'],
  ['memory-1', 'memory'],
  ['approvals-1', 'approvals'],
  ['gateway-1', 'gateway'],
];

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const random = seeded(options.seed);
  const perThread = options.runsPerThread ?? 4;
  const minKills = options.minKills ?? Math.max(6, Math.round(options.runs / 10));
  const minPostgresRestarts = options.postgresRestarts === false ? 0 : (options.minPostgresRestarts ?? 1);
  const minNatsRestarts = options.natsRestarts === false ? 0 : (options.minNatsRestarts ?? (options.cluster ? 1 : 0));
  if (options.serviceLogDir) mkdirSync(options.serviceLogDir, { recursive: true });
  const started = Date.now();
  const postgres = await PrivatePostgres.start();
  const bus = await (options.cluster ? clusterBus() : singleBus()).catch(async (error: unknown) => {
    await postgres.stop();
    throw error;
  });
  const effects = new EffectService();
  await effects.start();
  const stack = await Stack.create({
    databaseServerUrl: postgres.url,
    natsUrl: bus.url,
    serviceNatsUrl: bus.serviceUrl,
    env: {
      ...bus.env,
      AGENTS_DIR,
      RATCHET_DEMO_EFFECT_URL: effects.url,
      RATCHET_ACK_WAIT_MS: '2000',
      // The canary: a secret in every service's environment that must never reach a table or a stream.
      OPENAI_API_KEY: CANARY,
      GATEWAY_BOOTSTRAP_API_KEY: CANARY,
      RATCHET_CHAOS_SECRET: CANARY,
      // Kept logs say what each delivery decided (`tool call handled`, the ledger's decision per key).
      ...(options.serviceLogDir ? { LOG_LEVEL: 'debug' } : {}),
    },
  }).catch(async (error: unknown) => {
    await effects.stop();
    await bus.stop();
    await postgres.stop();
    throw error;
  });
  const approvals = new ApprovalsOperator(stack);
  let stopping = false;
  let operating = false;
  /** Starts a service and reports it when it exits by itself (not by our SIGKILL or the final stop). */
  const start = async (instance: Instance, service: Service): Promise<void> => {
    const proc = await stack.start(service, instance);
    void proc.exited.then(({ code, signal }) => {
      if (options.serviceLogDir) {
        appendFileSync(
          path.join(options.serviceLogDir, `${instance}.log`),
          `=== ${instance} exited (code ${code}, signal ${signal}) at ${new Date().toISOString()}\n${proc.logs}\n`,
        );
      }
      if (stopping || signal === 'SIGKILL') return;
      const tail = proc.logs.trim().split('\n').slice(-8).join('\n');
      log(`chaos: ${instance} exited by itself (code ${code}, signal ${signal}):\n${tail}`);
    });
  };
  try {
    await Promise.all(INSTANCES.map(([instance, service]) => start(instance, service)));
    log(`chaos: seed ${options.seed}, ${options.runs} runs, services up`);

    // Restarts until the service is ready (it exits at start while nats-server is down).
    const victims = new Map<Instance, Victim>(
      INSTANCES.map(([instance, service]) => [
        instance,
        {
          name: instance,
          kill: async () => {
            await stack.services.get(instance)?.process.kill('SIGKILL');
          },
          restart: async () => {
            for (let attempt = 1; ; attempt++) {
              try {
                await start(instance, service);
                return;
              } catch (error) {
                if (attempt >= 30) throw error;
                await sleep(300);
              }
            }
          },
        },
      ]),
    );

    // The approver: grants every pending approval of the chaos agent, during the chaos too (so grants are
    // re-checked and applied while services die), and in the wait loop below.
    operating = true;
    const operator = (async () => {
      while (operating) {
        await approvals.grantPending();
        await sleep(500); // not from `random`: the kill schedule stays replayable by its seed
      }
    })();

    const faults = new FaultLoop({
      random,
      bus,
      postgres,
      victims: [...victims.values()],
      minKills,
      natsRestarts: options.natsRestarts !== false,
      minNatsRestarts,
      postgresRestarts: options.postgresRestarts !== false,
      minPostgresRestarts,
      log,
    });

    const runs = Array.from({ length: options.runs }, (_, i) => {
      const requestId = `chaos-${options.seed}-${i}`;
      return {
        requestId,
        runId: runIdFor(TENANT, requestId),
        threadId: `chaos-${Math.floor(i / perThread)}`,
        item: `item-${i}`,
      };
    });
    for (const r of runs) {
      for (;;) {
        try {
          await stack.publishRequest(TENANT, {
            requestId: r.requestId,
            threadId: r.threadId,
            agent: 'chaos',
            input: [{ role: 'user', content: r.item }],
            principal: RUNNER,
            concurrency: 'enqueue',
          });
          break;
        } catch {
          await sleep(200); // nats-server is down: the same request id again (deduped)
        }
      }
      await sleep(15 + random() * 40);
    }
    log(`chaos: ${runs.length} requests published`);
    await faults.stop();
    for (const [instance] of INSTANCES) {
      const s = stack.services.get(instance);
      if (
        !s ||
        s.process.pid === undefined ||
        (await Promise.race([s.process.exited.then(() => true), sleep(10).then(() => false)]))
      ) {
        await faults.restart(victims.get(instance)!);
      }
    }
    const { actions, killed } = faults;
    log(
      `chaos: stopped after ${JSON.stringify(actions)} (SIGKILLs: ${JSON.stringify(killed)}); ` +
        `${approvals.granted.size} approvals granted so far; waiting for every run to end`,
    );

    // Wait for the runs; grant pending approvals and answer escalations like an operator who checked the
    // outside world. Own pools whose
    // statements are retried while Postgres is unreachable (a restart just before would break them once).
    const db = resilient(await surviving(() => openServiceDatabase(stack.testDb.url, 'orchestrator', 4, masterKey())));
    const tools = resilient(await surviving(() => openServiceDatabase(stack.testDb.url, 'tools', 2)));
    const resolved = new Set<string>();
    const deadline = Date.now() + 120_000 + options.runs * 1000;
    let pending = runs.length;
    while (Date.now() < deadline) {
      const done = await db.sql.query<{ run_id: string }>(
        `select distinct run_id from ${db.sql.table('thread_events')} where tenant_id = ? and type in ('run.completed','run.failed','run.cancelled')`,
        [TENANT],
      );
      const ended = new Set(done.map((r) => r.run_id));
      pending = runs.filter((r) => !ended.has(r.runId)).length;
      if (pending === 0) break;
      await approvals.grantPending();
      const uncertain = await tools.sql.query<{ key: string }>(
        `select key from ${tools.sql.table('effects')} where tenant_id = ? and state = 'uncertain'`,
        [TENANT],
      );
      for (const { key } of uncertain) {
        if (resolved.has(key)) continue;
        resolved.add(key);
        const happened = (effects.effects.get(key) ?? 0) > 0;
        const command: ToolResolveCommand = {
          kind: 'tool.resolve',
          commandId: `resolve:${key}`,
          tenantId: TENANT,
          idempotencyKey: key,
          resolution: happened
            ? { decision: 'happened', result: { effect: `${key}#1`, confirmedBy: 'chaos-operator' } }
            : { decision: 'fail', reason: 'the effect service never saw it' },
          by: 'chaos-operator',
        };
        await stack.nc
          .jetstream()
          .publish(`${stack.prefix.subject}.cmd.tool.${TENANT}`, JSON.stringify(command), { msgID: command.commandId });
      }
      await sleep(500);
    }

    operating = false;
    await operator;
    await approvals.reconcile();

    // Quiesce: every outbox row published (the feed check needs it).
    for (const sql of [db.sql, tools.sql]) {
      const until = Date.now() + 30_000;
      while (Date.now() < until) {
        const [row] = await sql.query<{ n: number }>(
          `select count(*)::int as n from ${sql.table('outbox')} where sent_at is null`,
        );
        if ((row?.n ?? 0) === 0) break;
        await sleep(300);
      }
    }
    await sleep(500);

    const approvalsDb = resilient(await surviving(() => openServiceDatabase(stack.testDb.url, 'approvals', 2)));
    const invariants = await check(stack, db, tools, approvalsDb, runs, effects, pending);
    await approvalsDb.close();
    await tools.close();
    await db.close();
    const report: ChaosReport = {
      seed: options.seed,
      runs: options.runs,
      actions,
      escalated: resolved.size,
      approved: approvals.granted.size,
      seconds: Math.round((Date.now() - started) / 100) / 10,
      invariants,
      ok: invariants.every((i) => i.ok),
    };
    return report;
  } finally {
    stopping = true;
    operating = false;
    await stack.stop();
    await effects.stop();
    await bus.stop();
    await postgres.stop();
  }
}

/** Each open run's last events, and the messages each service recorded as failed (consumer, code, reason). */
export async function openRunsDetail(
  runs: ReadonlyArray<{ runId: string; threadId: string }>,
  logs: ReadonlyMap<string, ThreadEvent[]>,
  endedRuns: ReadonlySet<string | undefined>,
  dbs: readonly Database[],
): Promise<string> {
  const open: string[] = [];
  for (const r of runs.filter((x) => !endedRuns.has(x.runId))) {
    const events = logs.get(r.threadId) ?? [];
    const own = events.filter((e) => e.runId === r.runId);
    const tail = own.slice(-4).map((e) => `${e.type}@${e.version}`);
    const last = events.at(-1);
    // The thread's model call as the orchestrator holds it: its outbox row (published? leased? by whom?).
    const [db] = dbs;
    const [call] = db
      ? await db.sql.query<{ call: unknown; row: unknown }>(
          `select th.state->'active'->'modelCall' as call, to_jsonb(o) - 'payload' as row
             from ${db.sql.table('threads')} th
             left join ${db.sql.table('outbox')} o on o.id = th.state->'active'->'modelCall'->>'commandId'
            where th.thread_id = ? and th.active_run_id = ?`,
          [r.threadId, r.runId],
        )
      : [];
    open.push(
      `${r.runId} on ${r.threadId} [${tail.join(', ') || 'no events'}] (thread at ${last ? `${last.type}@${last.version}` : 'nothing'})` +
        (call ? ` model call ${JSON.stringify(call.call)} row ${JSON.stringify(call.row)}` : ''),
    );
  }
  const failed: string[] = [];
  for (const db of dbs) {
    const rows = await db.sql.query<{ consumer: string; code: string; reason: string }>(
      `select consumer, code, left(reason, 160) as reason from ${db.sql.table('failed_messages')} order by id desc limit 5`,
    );
    failed.push(...rows.map((r) => `${db.sql.schema}/${r.consumer}: ${r.code} ${r.reason}`));
  }
  return `${open.join('; ')}; failed messages: ${failed.length ? failed.join(' | ') : 'none'}`;
}

async function check(
  stack: Stack,
  db: Database,
  tools: Database,
  approvalsDb: Database,
  runs: Array<{ requestId: string; runId: string; threadId: string }>,
  effects: EffectService,
  pending: number,
): Promise<Invariant[]> {
  const out: Invariant[] = [];
  const store = new PgThreadStore<ThreadState>(db, () => ({ status: '', agent: null, activeRunId: null }));
  const threads = [...new Set(runs.map((r) => r.threadId))];
  const logs = new Map<string, ThreadEvent[]>();
  for (const t of threads) logs.set(t, await store.readEvents(TENANT, t));
  const all = [...logs.values()].flat();

  // 1. Every run started and ended (an escalated one after the operator's answer).
  const startedRuns = new Set(all.filter((e) => e.type === 'run.started').map((e) => e.runId));
  const endedRuns = new Set(all.filter((e) => TERMINAL_TYPES.has(e.type)).map((e) => e.runId));
  const ended = runs.filter((r) => endedRuns.has(r.runId)).length;
  const completed = new Set(all.filter((e) => e.type === 'run.completed').map((e) => e.runId));
  out.push({
    name: 'runs terminal (or escalated and answered) / runs requested',
    value:
      `${ended} / ${runs.length} (started ${runs.filter((r) => startedRuns.has(r.runId)).length}, ` +
      `completed ${runs.filter((r) => completed.has(r.runId)).length}, still open ${pending})` +
      // What an open run was doing, and what any service gave up on: the first thing to read when this fails.
      (ended === runs.length ? '' : `; open: ${await openRunsDetail(runs, logs, endedRuns, [db, tools, approvalsDb])}`),
    ok: ended === runs.length,
  });

  out.push(eventLogInvariant(logs));

  // 3. Effects per tool kind.
  const ledger = await tools.sql.query<{ key: string; tool: string; kind: string; state: string }>(
    `select key, tool, kind, state from ${tools.sql.table('effects')} where tenant_id = ?`,
    [TENANT],
  );
  const byTool = new Map<string, { calls: number; over: number; applied: number }>();
  for (const row of ledger) {
    const t = byTool.get(row.tool) ?? { calls: 0, over: 0, applied: 0 };
    t.calls++;
    const n = row.tool === 'demo.effect.read' ? (effects.reads.get(row.key) ?? 0) : (effects.effects.get(row.key) ?? 0);
    t.applied += n;
    if (row.tool !== 'demo.effect.read' && n > 1) t.over++;
    byTool.set(row.tool, t);
  }
  for (const [tool, kind] of [
    ['demo.effect.charge', 'at-most-once'],
    ['demo.effect.upsert', 'idempotent'],
  ] as const) {
    const t = byTool.get(tool) ?? { calls: 0, over: 0, applied: 0 };
    out.push({
      name: `duplicate effects, ${kind} (${tool})`,
      value: `${t.over} keys applied more than once (${t.calls} calls, ${t.applied} effects applied)`,
      ok: t.over === 0 && t.calls === runs.length,
    });
  }
  const reads = byTool.get('demo.effect.read');
  const mem = byTool.get('memory.save');
  out.push({
    name: 'pure reads repeated (allowed) / memory.save ledger rows',
    value: `${reads ? reads.applied - reads.calls : 0} repeated reads; ${mem?.calls ?? 0} memory.save calls (one ledger row per key)`,
    ok: true,
  });

  out.push(failedCallsRow(all));
  out.push(await nudgedRunsRow(logs, tools, TENANT));

  // 4. Approvals: each run's upsert asked once, was decided once (granted by the approver, not the
  // requester), was marked used by its call, and the granted call ran once (one result, one effect).
  const requested = all.filter((e) => e.type === 'approval.requested');
  const requestedIds = new Set(requested.map((e) => (e.data as { approvalId: string }).approvalId));
  const askedRuns = new Set(requested.map((e) => e.runId));
  const grantedEvents = new Map<string, number>();
  for (const e of all) {
    if (e.type !== 'approval.granted') continue;
    const id = (e.data as { approvalId: string }).approvalId;
    grantedEvents.set(id, (grantedEvents.get(id) ?? 0) + 1);
  }
  const refusedEvents = all.filter((e) => e.type === 'approval.rejected' || e.type === 'approval.expired').length;
  const approvalRows = await approvalsDb.sql.query<{
    id: string;
    tool: string;
    decision: string | null;
    decided_by: string | null;
    used: boolean;
  }>(
    `select a.id, a.tool, d.decision, d.decided_by, a.used_by is not null as used
     from ${approvalsDb.sql.table('approvals')} a
     left join ${approvalsDb.sql.table('decisions')} d on d.tenant_id = a.tenant_id and d.approval_id = a.id
     where a.tenant_id = ? and a.kind = 'tool'`,
    [TENANT],
  );
  const decidedOnce = approvalRows.filter(
    (r) =>
      requestedIds.has(r.id) &&
      r.tool === APPROVED_TOOL &&
      r.decision === 'granted' &&
      r.decided_by === APPROVER.id &&
      grantedEvents.get(r.id) === 1,
  ).length;
  const used = approvalRows.filter((r) => r.used).length;
  out.push({
    name: 'approvals requested / decided exactly once',
    value:
      `${runs.filter((r) => askedRuns.has(r.runId)).length} / ${runs.length} runs asked (${requested.length} requests); ` +
      `${decidedOnce} / ${approvalRows.length} granted once by ${APPROVER.id}, ${used} used, ${refusedEvents} rejected or expired`,
    ok:
      askedRuns.size === runs.length &&
      requested.length === runs.length &&
      requestedIds.size === runs.length &&
      approvalRows.length === runs.length &&
      decidedOnce === runs.length &&
      used === runs.length &&
      refusedEvents === 0,
  });
  const keyOf = new Map<string, string>();
  const resultsOf = new Map<string, string[]>();
  for (const e of all) {
    const d = e.data as { callId: string; idempotencyKey?: string };
    const call = `${e.runId}/${d.callId}`;
    if (e.type === 'tool.requested' && d.idempotencyKey) keyOf.set(call, d.idempotencyKey);
    if (e.type === 'tool.completed' || e.type === 'tool.failed')
      resultsOf.set(call, [...(resultsOf.get(call) ?? []), e.type]);
  }
  let ranOnce = 0;
  let noResult = 0;
  let failedGranted = 0;
  let effectNotOnce = 0;
  const grantedCalls = all.filter((e) => e.type === 'approval.granted');
  for (const e of grantedCalls) {
    const call = `${e.runId}/${(e.data as { callId: string }).callId}`;
    const results = resultsOf.get(call) ?? [];
    const applied = effects.effects.get(keyOf.get(call) ?? '') ?? 0;
    if (results.length === 0) noResult++;
    if (results.includes('tool.failed')) failedGranted++;
    if (applied !== 1) effectNotOnce++;
    if (results.length === 1 && results[0] === 'tool.completed' && applied === 1) ranOnce++;
  }
  out.push({
    name: 'granted calls ran once (one result, one effect)',
    value:
      `${ranOnce} / ${grantedCalls.length} (${noResult} without a result, ${failedGranted} failed, ` +
      `${effectNotOnce} not applied exactly once)`,
    ok: ranOnce === grantedCalls.length && grantedCalls.length === runs.length,
  });

  out.push(await projectionsInvariant(store, TENANT, logs));
  out.push(...(await feedAndCanaryInvariants(stack, db, all, CANARY)));
  return out;
}

/** Each thread's versions are 1..n, ids unique, one terminal per run, one result per call. */
export function eventLogInvariant(logs: ReadonlyMap<string, ThreadEvent[]>): Invariant {
  let gaps = 0;
  let dupIds = 0;
  let doubleTerminal = 0;
  let doubleResults = 0;
  for (const events of logs.values()) {
    events.forEach((e, i) => {
      if (e.version !== i + 1) gaps++;
    });
    dupIds += events.length - new Set(events.map((e) => e.id)).size;
    const terms = events.filter((e) => TERMINAL_TYPES.has(e.type)).map((e) => e.runId);
    doubleTerminal += terms.length - new Set(terms).size;
    const results = events
      .filter((e) => e.type === 'tool.completed' || e.type === 'tool.failed')
      .map((e) => `${e.runId}/${(e.data as { callId: string }).callId}`);
    doubleResults += results.length - new Set(results).size;
  }
  return {
    name: 'lost or gapped events',
    value: `${gaps} gaps, ${dupIds} duplicate ids, ${doubleTerminal} runs ended twice, ${doubleResults} calls with two results`,
    ok: gaps + dupIds + doubleTerminal + doubleResults === 0,
  };
}

/** Not an invariant: the calls that ended in an error the model saw (the run goes on with it), by tool and error. */
export function failedCallsRow(all: readonly ThreadEvent[]): Invariant {
  const toolOf = new Map<string, string>();
  for (const e of all) {
    if (e.type === 'tool.requested') {
      const d = e.data as { callId: string; tool: string };
      toolOf.set(`${e.runId}/${d.callId}`, d.tool);
    }
  }
  const failures = new Map<string, number>();
  for (const e of all) {
    if (e.type !== 'tool.failed') continue;
    const d = e.data as { callId: string; error: { code: string; message: string } };
    // The tool and the error code, plus a trailing "(503)" / "(TIMEOUT)" of a request that got no answer.
    const detail = /\((\d{3}|TIMEOUT)\)$/.exec(d.error.message)?.[0];
    const why = `${toolOf.get(`${e.runId}/${d.callId}`) ?? '?'} ${d.error.code}${detail ? ` ${detail}` : ''}`;
    failures.set(why, (failures.get(why) ?? 0) + 1);
  }
  const failed = [...failures.values()].reduce((a, b) => a + b, 0);
  return {
    name: 'tool calls failed (reported to the model; not an invariant)',
    value:
      `${failed}` +
      (failed
        ? ` (${[...failures]
            .sort((a, b) => b[1] - a[1])
            .map(([why, n]) => `${n} × ${why}`)
            .join(', ')})`
        : ''),
    ok: true,
  };
}

/**
 * Not an invariant: runs that stopped moving and that the watchdog resumed after their step budget.
 * Recovered (each still has to end and hold every invariant), but each names a message that did not
 * arrive: what it last did, and its calls as the effect ledger holds them.
 */
export async function nudgedRunsRow(
  logs: ReadonlyMap<string, ThreadEvent[]>,
  tools: Database,
  tenant: string,
): Promise<Invariant> {
  const nudged: string[] = [];
  for (const events of logs.values())
    for (const [i, e] of events.entries()) {
      const reason = e.type === 'run.resumed' ? String((e.data as { reason?: unknown }).reason ?? '') : '';
      if (!reason.startsWith('watchdog: no progress')) continue;
      // Its calls as the effect ledger holds them: which result the thread never got, and from which attempt.
      const calls = await tools.sql.query<{ key: string; state: string; attempts: number; leased_by: string | null }>(
        `select key, state, attempts, leased_by from ${tools.sql.table('effects')} where tenant_id = ? and run_id = ? order by key`,
        [tenant, e.runId],
      );
      const before = events
        .slice(Math.max(0, i - 6), i)
        .map((x) => `${x.type}@${x.version}`)
        .join(', ');
      const ledger = calls
        .map((c) => `${c.key.split(':').at(-1)} ${c.state}×${c.attempts}${c.leased_by ? ` by ${c.leased_by}` : ''}`)
        .join(', ');
      nudged.push(`${e.runId} after [${before}]; ledger now: ${ledger}`);
    }
  return {
    name: 'runs the watchdog resumed for no progress (recovered; not an invariant)',
    value: `${nudged.length}${nudged.length ? ` (${nudged.join(', ')})` : ''}`,
    ok: true,
  };
}

/** Projections equal the replay of their log: the state and the stored conversation, message by message. */
export async function projectionsInvariant(
  store: PgThreadStore<ThreadState>,
  tenant: string,
  logs: ReadonlyMap<string, ThreadEvent[]>,
): Promise<Invariant> {
  const threads = [...logs.keys()];
  let projOk = 0;
  for (const t of threads) {
    const stored = await store.readProjection(tenant, t);
    const events = logs.get(t) ?? [];
    const replayed = foldRecord(recordFrom(), events);
    const messages = await store.readMessages(tenant, t);
    if (
      stored?.version === events.length &&
      diffProjections(stored.state, replayed.state).length === 0 &&
      diffProjections(messages, replayed.transcript).length === 0
    )
      projOk++;
  }
  return {
    name: 'projections equal to replay',
    value: `${projOk} / ${threads.length}`,
    ok: projOk === threads.length,
  };
}

/**
 * The JetStream decision feed (v2, on the EVENTS stream) holds every logged event (duplicates by version
 * allowed, missing not), and the canary secret is in no table and no message of any stream.
 */
export async function feedAndCanaryInvariants(
  stack: Stack,
  db: Database,
  all: readonly ThreadEvent[],
  canary: string,
): Promise<Invariant[]> {
  // 6. The JetStream decision feed holds every logged event (duplicates by version allowed, missing not).
  const feedSubjects = `${stack.prefix.subject}.feed.`;
  const jsm = await stack.nc.jetstreamManager();
  const topo = declareTopology({ subjectPrefix: stack.prefix.subject, streamPrefix: stack.prefix.stream });
  const streamText: string[] = [];
  const feed = new Map<string, string>();
  let phantom = 0;
  for (const s of topo.streams) {
    const info = await jsm.streams.info(s.config.name);
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await jsm.streams.getMessage(s.config.name, { seq }).catch(() => undefined);
      if (!m) continue;
      const text = new TextDecoder().decode(m.data);
      streamText.push(text, JSON.stringify(m.header ? [...m.header.keys()].map((k) => m.header.get(k)) : []));
      if (s.role !== 'events' || !m.subject.startsWith(feedSubjects)) continue;
      for (const e of feedEvents(JSON.parse(text), m.subject)) {
        const k = `${e.threadId}#${e.version}`;
        if (feed.has(k) && feed.get(k) !== e.id) phantom++;
        feed.set(k, e.id);
      }
    }
  }
  let missing = 0;
  for (const e of all) {
    const id = feed.get(`${e.threadId}#${e.version}`);
    if (id === undefined) missing++;
    else if (id !== e.id) phantom++;
  }
  const feedRow: Invariant = {
    name: 'JetStream EVENTS feed equal to the log',
    value: `${all.length - missing} / ${all.length} events on the feed, ${missing} missing, ${phantom} not in the log`,
    ok: missing === 0 && phantom === 0,
  };

  // 7. The canary secret is in no table and no stream.
  let tablesWith = 0;
  const found: string[] = [];
  const tables = await db.sql.query<{ schema: string; name: string }>(
    `select table_schema as schema, table_name as name from information_schema.tables
     where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
  );
  for (const t of tables) {
    const q = `"${t.schema}"."${t.name}"`;
    const [row] = await db.sql.query<{ n: number }>(`select count(*)::int as n from ${q} x where x::text like ?`, [
      `%${canary}%`,
    ]);
    if ((row?.n ?? 0) > 0) {
      tablesWith++;
      found.push(q);
    }
  }
  const inStreams = streamText.filter((t) => t.includes(canary)).length;
  return [
    feedRow,
    {
      name: 'canary secrets found',
      value: `${tablesWith + inStreams} (${tables.length} tables and ${streamText.length / 2} stream messages scanned${found.length ? `; in ${found.join(', ')}` : ''})`,
      ok: tablesWith + inStreams === 0,
    },
  ];
}
