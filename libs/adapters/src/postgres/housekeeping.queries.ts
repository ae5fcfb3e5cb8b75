import { SERVICE_SCHEMAS, type ServiceName } from './migrations';
import { isoColumn, quoteIdent, type SqlExecutor } from './sql';

/**
 * The built-in housekeeping's storage (docs/runbooks/retention.md): the job's cursor, the ticks done,
 * and the pruning statements. Each prune deletes in batches (short transactions, no long lock on a
 * busy table) and only what its condition names.
 */

/** The job's row, made on first use with the cursor at `now` (nothing before a deployment is caught up). */
export async function ensureHousekeepingJob(sql: SqlExecutor, job: string, now: string): Promise<void> {
  await sql.run(
    `insert into ${sql.table('housekeeping')} (job, decided_through, updated_at) values (?, ?, ?) on conflict do nothing`,
    [job, now, now],
  );
}

/**
 * Claims the job for the caller's transaction (`for update skip locked`): undefined when another
 * orchestrator holds it (it is running a tick) or the row does not exist. Call inside a transaction.
 */
export async function claimHousekeepingJob(
  sql: SqlExecutor,
  job: string,
): Promise<{ decidedThrough: string } | undefined> {
  const rows = await sql.query<{ decided_through: string }>(
    `select ${isoColumn('decided_through')} from ${sql.table('housekeeping')} where job = ? for update skip locked`,
    [job],
  );
  return rows[0] && { decidedThrough: rows[0].decided_through };
}

export interface HousekeepingTickRecord {
  tickAt: string;
  missed: number;
  startedAt: string;
  finishedAt: string;
  decidedBy: string;
  report: Record<string, unknown>;
}

/** Moves the job's cursor and, when a tick ran, records it (same transaction as the claim). */
export async function recordHousekeeping(
  sql: SqlExecutor,
  job: string,
  decidedThrough: string,
  tick: HousekeepingTickRecord | undefined,
): Promise<void> {
  if (tick)
    await sql.run(
      `insert into ${sql.table('housekeeping_ticks')} (job, tick_at, missed, started_at, finished_at, decided_by, report)
       values (?, ?, ?, ?, ?, ?, ?::jsonb)`,
      [job, tick.tickAt, tick.missed, tick.startedAt, tick.finishedAt, tick.decidedBy, JSON.stringify(tick.report)],
    );
  await sql.run(`update ${sql.table('housekeeping')} set decided_through = ?, updated_at = ? where job = ?`, [
    decidedThrough,
    tick?.finishedAt ?? decidedThrough,
    job,
  ]);
}

/** The latest ticks of a job, newest first. */
export async function listHousekeepingTicks(
  sql: SqlExecutor,
  job: string,
  limit: number,
): Promise<HousekeepingTickRecord[]> {
  const rows = await sql.query<{
    tick_at: string;
    missed: number;
    started_at: string;
    finished_at: string;
    decided_by: string;
    report: Record<string, unknown>;
  }>(
    `select ${isoColumn('tick_at')}, missed, ${isoColumn('started_at')}, ${isoColumn('finished_at')}, decided_by, report
       from ${sql.table('housekeeping_ticks')} where job = ? order by tick_at desc limit ?`,
    [job, limit],
  );
  return rows.map((r) => ({
    tickAt: r.tick_at,
    missed: r.missed,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    decidedBy: r.decided_by,
    report: r.report,
  }));
}

const BATCH = 5000;

/** Deletes `where` rows of `table` in batches of BATCH; returns how many. */
async function deleteInBatches(sql: SqlExecutor, table: string, where: string, params: unknown[]): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await sql.run(
      `delete from ${table} where ctid in (select ctid from ${table} where ${where} limit ${BATCH})`,
      params,
    );
    total += n;
    if (n < BATCH) return total;
  }
}

const tableOf = (service: ServiceName, table: string) =>
  `${quoteIdent(SERVICE_SCHEMAS[service].schema)}.${quoteIdent(table)}`;

/** Schemas that exist in this database (a deployment may not run every service). */
async function presentServices(sql: SqlExecutor): Promise<ServiceName[]> {
  const services = Object.keys(SERVICE_SCHEMAS) as ServiceName[];
  const rows = await sql.query<{ schema: string }>(
    `select table_schema as schema from information_schema.tables where table_name = 'inbox' and table_schema in (?)`,
    [services.map((s) => SERVICE_SCHEMAS[s].schema)],
  );
  const present = new Set(rows.map((r) => r.schema));
  return services.filter((s) => present.has(SERVICE_SCHEMAS[s].schema));
}

/**
 * Dedup inbox rows processed before `before`, in every service schema. A message is redelivered within
 * its ack wait (seconds) of being processed, so an inbox row older than a day guards nothing; keep
 * the age well above the longest a message may stay unacknowledged on the bus.
 */
export async function pruneInboxes(sql: SqlExecutor, before: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const service of await presentServices(sql))
    counts[`${SERVICE_SCHEMAS[service].schema}.inbox`] = await deleteInBatches(
      sql,
      tableOf(service, 'inbox'),
      'processed_at < ?::timestamptz',
      [before],
    );
  return counts;
}

/** Failed-message records older than `before`, in every service schema. */
export async function pruneFailedMessages(sql: SqlExecutor, before: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const service of await presentServices(sql))
    counts[`${SERVICE_SCHEMAS[service].schema}.failed_messages`] = await deleteInBatches(
      sql,
      tableOf(service, 'failed_messages'),
      'failed_at < ?::timestamptz',
      [before],
    );
  return counts;
}

/** Webhook deliveries that ended (delivered or dead) before `before`. Pending ones stay, however old. */
export async function pruneWebhookDeliveries(sql: SqlExecutor, before: string): Promise<number> {
  return deleteInBatches(
    sql,
    sql.table('webhook_deliveries'),
    `status in ('delivered', 'dead') and updated_at < ?::timestamptz`,
    [before],
  );
}

/**
 * Records of schedule ticks decided before `before`. Only history: a schedule's cursor (on its row)
 * says what was decided, so no tick is started again for a record pruned.
 */
export async function pruneScheduleTicks(sql: SqlExecutor, before: string): Promise<number> {
  return deleteInBatches(sql, sql.table('schedule_ticks'), 'decided_at < ?::timestamptz', [before]);
}

/**
 * Idempotency-Keys taken before `before`, with their stored answers (the gateway's schema; 0 when it is
 * not in this database). A key used again after this is a new key: run requests still start at most one
 * run per request id, ever (the orchestrator's runs), other routes do the request again.
 */
export async function pruneIdempotencyKeys(sql: SqlExecutor, before: string): Promise<number> {
  const table = tableOf('gateway', 'idempotency_keys');
  const [present] = await sql.query<{ ok: boolean }>(`select to_regclass(?) is not null as ok`, [table]);
  if (!present?.ok) return 0;
  return deleteInBatches(sql, table, 'created_at < ?::timestamptz', [before]);
}
