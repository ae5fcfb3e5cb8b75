import { isoColumn, type Database } from '@ratchet/adapters';
import type { ThreadState } from '@ratchet/domain';
import type { Logger } from '@ratchet/platform';
import type { AgentCatalog } from '../agents/agent-catalog';
import type { ThreadCommandHandler } from '../threads/thread-command.handler';
import { watchdogCommand, type RunCandidate } from './stalled-runs';

export interface WatchdogOptions {
  intervalMs: number;
  /** Threads idle for less than this are not even looked at. */
  minIdleMs: number;
  batch: number;
  worker: string;
}

/**
 * Finds runs with no progress and nudges or expires them through the same handler as every other
 * message, with a message id derived from the thread version: any number of orchestrators may run the
 * watchdog, and a thread version is acted on once (the inbox claim dedups the others).
 */
export class Watchdog {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly db: Database,
    private readonly handler: ThreadCommandHandler,
    private readonly agents: AgentCatalog,
    private readonly logger: Logger,
    private readonly options: WatchdogOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'watchdog tick failed'))
        .finally(() => (this.running = undefined));
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
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
    }>(
      `select th.tenant_id, th.thread_id, th.version, th.active_run_id, th.state, ${isoColumn('th.updated_at', 'updated_at')},
              ${isoColumn('r.started_at', 'started_at')}, r.agent, r.agent_version
         from ${t('threads')} th join ${t('runs')} r on r.tenant_id = th.tenant_id and r.run_id = th.active_run_id
        where th.status = 'running' and th.updated_at < now() - (? * interval '1 millisecond')
        order by th.updated_at limit ?`,
      [this.options.minIdleMs, this.options.batch],
    );
    let acted = 0;
    for (const row of rows) {
      const agent = await this.agents.get(row.tenant_id, row.agent, row.agent_version);
      const limits = {
        stepTimeoutMs: (agent?.definition.stepTimeoutSeconds ?? 120) * 1000,
        runTimeoutMs: (agent?.definition.runTimeoutSeconds ?? 3600) * 1000,
      };
      const candidate: RunCandidate = {
        tenantId: row.tenant_id,
        threadId: row.thread_id,
        version: row.version,
        runId: row.active_run_id,
        startedAt: row.started_at,
        updatedAt: row.updated_at,
        state: typeof row.state === 'string' ? (JSON.parse(row.state) as ThreadState) : row.state,
      };
      const command = watchdogCommand(candidate, limits, now, this.options.worker);
      if (!command) continue;
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
