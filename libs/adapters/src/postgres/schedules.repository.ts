import type { Schedule, ScheduleDecision } from '@ratchet/domain';
import { isoColumn, valuesList, type SqlExecutor } from './sql';

/** A schedule as stored: its definition and the ticker's cursor. */
export interface StoredSchedule {
  schedule: Schedule;
  decidedThrough: string;
  nextDueAt: string | null;
  lastRunId: string | null;
  lastThreadId: string | null;
  /** Why it was paused when no one asked (`principal.revoked: …`); null otherwise. */
  pausedReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What a tick did, as recorded. */
export interface ScheduleTickRecord {
  tickAt: string;
  action: 'start' | 'skip';
  reason: string | null;
  requestId: string | null;
  decidedAt: string;
  decidedBy: string;
}

type Spec = Pick<Schedule, 'timing' | 'agent' | 'input' | 'thread' | 'overlap' | 'catchUp' | 'endAt' | 'webhookUrl'>;

interface Row {
  tenant_id: string;
  schedule_id: string;
  spec: Spec;
  principal: Schedule['principal'];
  paused: boolean;
  paused_reason: string | null;
  anchor_at: string;
  decided_through: string;
  next_due_at: string | null;
  last_run_id: string | null;
  last_thread_id: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS = [
  'tenant_id',
  'schedule_id',
  'spec',
  'principal',
  'paused',
  'paused_reason',
  isoColumn('anchor_at'),
  isoColumn('decided_through'),
  isoColumn('next_due_at'),
  'last_run_id',
  'last_thread_id',
  isoColumn('created_at'),
  isoColumn('updated_at'),
].join(', ');

function fromRow(r: Row): StoredSchedule {
  const { endAt, webhookUrl, ...spec } = r.spec;
  return {
    schedule: {
      id: r.schedule_id,
      tenantId: r.tenant_id,
      ...spec,
      ...(endAt ? { endAt } : {}),
      ...(webhookUrl ? { webhookUrl } : {}),
      paused: r.paused,
      anchorAt: r.anchor_at,
      principal: r.principal,
    },
    decidedThrough: r.decided_through,
    nextDueAt: r.next_due_at,
    lastRunId: r.last_run_id,
    lastThreadId: r.last_thread_id,
    pausedReason: r.paused_reason,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function specOf(s: Schedule): Spec {
  return {
    timing: s.timing,
    agent: s.agent,
    input: s.input,
    thread: s.thread,
    overlap: s.overlap,
    catchUp: s.catchUp,
    ...(s.endAt ? { endAt: s.endAt } : {}),
    ...(s.webhookUrl ? { webhookUrl: s.webhookUrl } : {}),
  };
}

/**
 * A tenant's schedules in the orchestrator's schema. Every method takes the tenant: another tenant's
 * schedule is not found. Pass a transaction's executor to make several calls one commit.
 */
export class SchedulesRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /** False when the tenant already has a schedule with this id (nothing written). */
  async insert(s: Schedule, cursor: { decidedThrough: string; nextDueAt: string | null }): Promise<boolean> {
    const inserted = await this.sql.run(
      `insert into ${this.sql.table('schedules')}
         (tenant_id, schedule_id, spec, principal, paused, anchor_at, decided_through, next_due_at, created_at, updated_at)
       values (?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?, ?, ?) on conflict do nothing`,
      [
        s.tenantId,
        s.id,
        JSON.stringify(specOf(s)),
        JSON.stringify(s.principal),
        s.paused,
        s.anchorAt,
        cursor.decidedThrough,
        cursor.nextDueAt,
        cursor.decidedThrough,
        cursor.decidedThrough,
      ],
    );
    return inserted === 1;
  }

  async list(tenantId: string): Promise<StoredSchedule[]> {
    const rows = await this.sql.query<Row>(
      `select ${COLUMNS} from ${this.sql.table('schedules')} where tenant_id = ? order by schedule_id`,
      [tenantId],
    );
    return rows.map(fromRow);
  }

  /** `forUpdate`: lock the row for the rest of the transaction (a change that reads, then writes). */
  async get(tenantId: string, id: string, forUpdate = false): Promise<StoredSchedule | undefined> {
    const rows = await this.sql.query<Row>(
      `select ${COLUMNS} from ${this.sql.table('schedules')} where tenant_id = ? and schedule_id = ?${
        forUpdate ? ' for update' : ''
      }`,
      [tenantId, id],
    );
    return rows[0] && fromRow(rows[0]);
  }

  /** Writes the definition and the cursor of a schedule that exists; a resumed schedule loses its pause reason. */
  async save(s: Schedule, cursor: { decidedThrough: string; nextDueAt: string | null }, now: string): Promise<void> {
    await this.sql.run(
      `update ${this.sql.table('schedules')}
          set spec = ?::jsonb, paused = ?, paused_reason = case when ? then paused_reason end,
              decided_through = ?, next_due_at = ?, updated_at = ?
        where tenant_id = ? and schedule_id = ?`,
      [JSON.stringify(specOf(s)), s.paused, s.paused, cursor.decidedThrough, cursor.nextDueAt, now, s.tenantId, s.id],
    );
  }

  /**
   * Pauses the schedules a principal created, with `reason`, in the caller's transaction (a revocation:
   * their ticks would start runs as it). Already paused ones keep their state. Returns the ids paused.
   */
  async pauseOfPrincipal(tenantId: string, principalId: string, reason: string, now: string): Promise<string[]> {
    const rows = await this.sql.query<{ schedule_id: string }>(
      `update ${this.sql.table('schedules')} set paused = true, paused_reason = ?, next_due_at = null, updated_at = ?
        where tenant_id = ? and principal->>'id' = ? and not paused
        returning schedule_id`,
      [reason, now, tenantId, principalId],
    );
    return rows.map((r) => r.schedule_id).sort();
  }

  /** Removes the schedule and its tick history; false when there was none. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    await this.sql.run(`delete from ${this.sql.table('schedule_ticks')} where tenant_id = ? and schedule_id = ?`, [
      tenantId,
      id,
    ]);
    const n = await this.sql.run(`delete from ${this.sql.table('schedules')} where tenant_id = ? and schedule_id = ?`, [
      tenantId,
      id,
    ]);
    return n === 1;
  }

  /** The latest ticks decided for a schedule, newest first. */
  async ticks(tenantId: string, id: string, limit: number): Promise<ScheduleTickRecord[]> {
    const rows = await this.sql.query<{
      tick_at: string;
      action: 'start' | 'skip';
      reason: string | null;
      request_id: string | null;
      decided_at: string;
      decided_by: string;
    }>(
      `select ${isoColumn('tick_at')}, action, reason, request_id, ${isoColumn('decided_at')}, decided_by
         from ${this.sql.table('schedule_ticks')} where tenant_id = ? and schedule_id = ?
        order by tick_at desc limit ?`,
      [tenantId, id, limit],
    );
    return rows.map((r) => ({
      tickAt: r.tick_at,
      action: r.action,
      reason: r.reason,
      requestId: r.request_id,
      decidedAt: r.decided_at,
      decidedBy: r.decided_by,
    }));
  }
}

/**
 * Claims up to `limit` schedules due at `now`, every tenant's, locking their rows for the caller's
 * transaction; rows another transaction holds are skipped (`skip locked`), so tickers never wait for
 * or decide the same schedule at once. Call inside a transaction.
 */
export async function claimDueSchedules(sql: SqlExecutor, now: string, limit: number): Promise<StoredSchedule[]> {
  const rows = await sql.query<Row>(
    `select ${COLUMNS} from ${sql.table('schedules')}
      where next_due_at is not null and next_due_at <= ? and not paused
      order by next_due_at limit ? for update skip locked`,
    [now, limit],
  );
  return rows.map(fromRow);
}

/** Which of a tenant's runs are still going (queued or running); a run not recorded yet is not. */
export async function activeRuns(sql: SqlExecutor, tenantId: string, runIds: readonly string[]): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const rows = await sql.query<{ run_id: string }>(
    `select run_id from ${sql.table('runs')}
      where tenant_id = ? and run_id in (?) and status not in ('completed', 'failed', 'cancelled')`,
    [tenantId, runIds],
  );
  return new Set(rows.map((r) => r.run_id));
}

/** Records a decision: the ticks it decided and the schedule's new cursor (and last run). */
export async function recordTickDecision(
  sql: SqlExecutor,
  stored: StoredSchedule,
  decision: ScheduleDecision,
  last: { runId: string; threadId: string } | undefined,
  decided: { at: string; by: string },
): Promise<void> {
  const s = stored.schedule;
  if (decision.ticks.length > 0) {
    const params: unknown[] = [];
    for (const t of decision.ticks)
      params.push(
        s.tenantId,
        s.id,
        t.at,
        t.action,
        t.action === 'skip' ? t.reason : null,
        t.action === 'start' ? t.request.requestId : null,
        decided.at,
        decided.by,
      );
    await sql.run(
      `insert into ${sql.table('schedule_ticks')}
         (tenant_id, schedule_id, tick_at, action, reason, request_id, decided_at, decided_by)
       values ${valuesList(decision.ticks.length, '(?, ?, ?, ?, ?, ?, ?, ?)')} on conflict do nothing`,
      params,
    );
  }
  await sql.run(
    `update ${sql.table('schedules')}
        set decided_through = ?, next_due_at = ?, last_run_id = coalesce(?, last_run_id),
            last_thread_id = coalesce(?, last_thread_id)
      where tenant_id = ? and schedule_id = ?`,
    [decision.decidedThrough, decision.nextDueAt, last?.runId ?? null, last?.threadId ?? null, s.tenantId, s.id],
  );
}
