import { isoColumn, ModelCallLeases, type Database } from '@ratchet/adapters';
import { watchdogAction, type RunCandidate, type ThreadCommand, type ThreadState } from '@ratchet/domain';
import type { Logger } from '@ratchet/platform';
import { PeriodicPass } from '../periodic-pass';

/** Where the watchdog sends its nudges and expiries: the thread engine (`ThreadCommandHandler`). */
export interface WatchdogThreads {
  handle(
    consumer: string,
    messageId: string,
    command: ThreadCommand,
    meta: { correlationId: string },
  ): Promise<{ status: string }>;
}

/** The pinned agent version's timeouts (the orchestrator's `AgentCatalog`). */
export interface WatchdogAgents {
  get(
    tenant: string,
    name: string,
    version: number,
  ): Promise<{ definition: { stepTimeoutSeconds?: number; runTimeoutSeconds?: number } } | undefined>;
}

/** The agent contract's default, for a run whose agent version is no longer known. */
const DEFAULT_STEP_TIMEOUT_SECONDS = 300;

export interface WatchdogOptions {
  intervalMs: number;
  /** Threads idle for less than this are not even looked at. */
  minIdleMs: number;
  /** A published model call no worker took for this long (at least the step budget) is lost. */
  lostAfterMs: number;
  batch: number;
  worker: string;
}

/**
 * Finds runs with no progress and nudges or expires them through the same handler as every other
 * message, with a message id derived from the thread version: any number of orchestrators may run the
 * watchdog, and a thread version is acted on once (the inbox claim dedups the others). A model call
 * that a live worker holds (its lease renewed) is not even looked at, however long it runs.
 */
export class Watchdog {
  private readonly loop: PeriodicPass;

  constructor(
    private readonly db: Database,
    private readonly handler: WatchdogThreads,
    private readonly agents: WatchdogAgents,
    private readonly logger: Logger,
    private readonly options: WatchdogOptions,
  ) {
    this.leases = new ModelCallLeases(db.sql);
    this.loop = new PeriodicPass(
      options.intervalMs,
      () => this.tick(),
      (error) => this.logger.warn({ err: error }, 'watchdog tick failed'),
    );
  }

  private readonly leases: ModelCallLeases;

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  async tick(now = new Date()): Promise<number> {
    const t = (name: string) => this.db.sql.table(name);
    const rows = await this.db.sql.query<{
      tenant_id: string;
      thread_id: string;
      version: number;
      active_run_id: string;
      state: ThreadState | string;
      updated_at: string;
      started_at: string | null;
      agent: string;
      agent_version: number;
      call_row: boolean;
      call_sent_at: string | null;
      call_available_at: string | null;
      call_leased_by: string | null;
    }>(
      `select th.tenant_id, th.thread_id, th.version, th.active_run_id, th.state, ${isoColumn('th.updated_at', 'updated_at')},
              ${isoColumn('r.started_at', 'started_at')}, r.agent, r.agent_version,
              o.id is not null as call_row, ${isoColumn('o.sent_at', 'call_sent_at')},
              case when o.available_at = 'infinity' then 'infinity'
                   else to_char(o.available_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end as call_available_at,
              o.leased_by as call_leased_by
         from ${t('threads')} th join ${t('runs')} r on r.tenant_id = th.tenant_id and r.run_id = th.active_run_id
         left join ${t('outbox')} o on o.id = th.state->'active'->'modelCall'->>'commandId'
        where th.status = 'running' and th.updated_at < now() - (? * interval '1 millisecond')
          and (
            -- A model call a live worker holds, or still to be published, is progress: not a candidate.
            -- Without a model-call row (a run in its tool phase, or a call row pruned) there is nothing to
            -- ask: the run is a candidate and the pure rule looks at its idle time (a lost tool result).
            -- A run waiting for a human is not stalled either (nor does it take a batch slot).
            (not coalesce(o.available_at > now() and o.available_at <> 'infinity', false)
              and not (o.id is not null and o.sent_at is null and o.available_at is null)
              and th.state->'active'->'waiting' is null)
            -- unless the run is past its time budget: then its work is stopped whatever it does. Working
            -- time leaves out the waits that ended (a run that waits now is not working, so not over).
            or r.started_at < now() - coalesce((th.state->'active'->'limits'->>'wallTimeSeconds')::int, 2147483647)
                                        * interval '1 second'
            or (th.state->'active'->'waiting' is null
                and r.started_at + coalesce((th.state->'active'->>'waitedMs')::bigint, 0) * interval '1 millisecond'
                    < now() - (th.state->'active'->'limits'->>'workingTimeSeconds')::int * interval '1 second'))
        order by th.updated_at limit ?`,
      [this.options.minIdleMs, this.options.batch],
    );
    let acted = 0;
    for (const row of rows) {
      const agent = await this.agents.get(row.tenant_id, row.agent, row.agent_version);
      const limits = {
        stepTimeoutMs: (agent?.definition.stepTimeoutSeconds ?? DEFAULT_STEP_TIMEOUT_SECONDS) * 1000,
        runTimeoutMs: (agent?.definition.runTimeoutSeconds ?? 3600) * 1000,
        lostAfterMs: this.options.lostAfterMs,
      };
      const candidate: RunCandidate = {
        tenantId: row.tenant_id,
        threadId: row.thread_id,
        version: row.version,
        runId: row.active_run_id,
        startedAt: row.started_at,
        updatedAt: row.updated_at,
        state: typeof row.state === 'string' ? (JSON.parse(row.state) as ThreadState) : row.state,
        ...(row.call_row
          ? {
              modelCall: {
                sentAt: row.call_sent_at,
                availableAt: row.call_available_at,
                leasedBy: row.call_leased_by,
              },
            }
          : {}),
      };
      const action = watchdogAction(candidate, limits, now, this.options.worker);
      if (!action) continue;
      // A lost model call is fenced first: if a worker took it meanwhile, the fence fails and it stays.
      if (action.fence && !(await this.leases.fence(action.fence.id, action.fence.idleMs))) continue;
      const command = action.command;
      const outcome = await this.handler.handle(
        'watchdog',
        `watchdog:${row.tenant_id}:${row.thread_id}:${row.version}`,
        command,
        {
          correlationId: row.active_run_id,
        },
      );
      if (outcome.status === 'applied') {
        acted++;
        this.logger.info(
          { tenantId: row.tenant_id, threadId: row.thread_id, runId: row.active_run_id, command: command.type },
          'watchdog acted',
        );
      }
    }
    return acted;
  }
}
