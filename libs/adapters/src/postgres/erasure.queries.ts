import { createHash } from 'node:crypto';
import { SERVICE_SCHEMAS, type ServiceName } from './migrations';
import type { ThreadKey } from './operator-threads.queries';
import { isoColumn, quoteIdent, type SqlExecutor } from './sql';

/**
 * Erasure (architecture §9): the threads of a subject, the removal of a thread from every service's schema
 * (all services share one database, one schema each, so a removal is one transaction across schemas),
 * the audit tombstone and the subject's memory. Used by `ratchet erase` and `ratchet retention`.
 */

/** The threads with a run started by `principalId`, with whether any of their runs is still going. */
export async function threadsOfPrincipal(
  sql: SqlExecutor,
  principalId: string,
  tenantId?: string,
): Promise<(ThreadKey & { busy: boolean })[]> {
  const params: unknown[] = [principalId];
  let tenant = '';
  if (tenantId !== undefined) {
    tenant = 'and r.tenant_id = ?';
    params.push(tenantId);
  }
  const rows = await sql.query<{ tenant_id: string; thread_id: string; busy: boolean }>(
    `select r.tenant_id, r.thread_id, (
       exists (select 1 from ${sql.table('runs')} x where x.tenant_id = r.tenant_id and x.thread_id = r.thread_id
         and x.status in ('queued', 'running'))
       or exists (select 1 from ${sql.table('threads')} t where t.tenant_id = r.tenant_id and t.thread_id = r.thread_id
         and t.status <> 'idle')) as busy
     from ${sql.table('runs')} r where r.principal_id = ? ${tenant}
     group by r.tenant_id, r.thread_id order by r.tenant_id, r.thread_id`,
    params,
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, threadId: r.thread_id, busy: r.busy }));
}

/** `"schema"."table"` of another service's schema (all schemas live in one database). */
function tableOf(service: ServiceName, table: string): string {
  return `${quoteIdent(SERVICE_SCHEMAS[service].schema)}.${quoteIdent(table)}`;
}

/** Rows removed per `<schema>.<table>`. */
export type RemovalCounts = Record<string, number>;

/**
 * Deletes a thread from every schema in the caller's transaction: the orchestrator's log, snapshot,
 * projection, conversation messages and runs; the effect ledger rows keyed `<tenant>:<thread>:…`; the approvals of the thread
 * with their decisions and audit rows; the gateway's Idempotency-Keys that named it or its runs; its runs' webhook deliveries; its runs' request ids in schedule
 * ticks (redacted: set to null) and a schedule's last thread and run when they are this thread's (counted
 * under the table they were redacted in); and in every schema the outbox rows and failed messages that
 * name the thread, and the inbox rows whose message id is one of the thread's ids (events, causations,
 * request ids, removed outbox rows). Returns the counts per table (zero counts included).
 */
/**
 * What becomes of the thread's data key (ADR 0034): an erasure `destroy`s it, so no copy of its content
 * can be opened again; a retention drop `detach`es it (the row keeps the key under its id only, not the
 * thread's), so an archive exported before the drop can still be restored.
 */
export type ThreadKeyDisposal = 'destroy' | 'detach';

export async function removeThreadEverywhere(
  sql: SqlExecutor,
  tenantId: string,
  threadId: string,
  key: ThreadKeyDisposal,
): Promise<RemovalCounts> {
  const counts: RemovalCounts = {};
  const add = (service: ServiceName, table: string, n: number) => {
    const k = `${SERVICE_SCHEMAS[service].schema}.${table}`;
    counts[k] = (counts[k] ?? 0) + n;
  };
  const o = (t: string) => tableOf('orchestrator', t);
  // Ids that inbox rows of any service may hold for this thread's messages.
  const idRows = await sql.query<{ id: string }>(
    `select id from ${o('thread_events')} where tenant_id = ? and thread_id = ?
     union select causation_id from ${o('thread_events')} where tenant_id = ? and thread_id = ?
     union select request_id from ${o('runs')} where tenant_id = ? and thread_id = ?
     union select ? || ':' || request_id from ${o('runs')} where tenant_id = ? and thread_id = ?`,
    [tenantId, threadId, tenantId, threadId, tenantId, threadId, tenantId, tenantId, threadId],
  );
  const requestIds = (
    await sql.query<{ request_id: string }>(
      `select request_id from ${o('runs')} where tenant_id = ? and thread_id = ?`,
      [tenantId, threadId],
    )
  ).map((r) => r.request_id);
  const ids = new Set(idRows.map((r) => r.id));
  const requestIdArray = `{${requestIds.map(pgArrayItem).join(',')}}`;

  const services = Object.keys(SERVICE_SCHEMAS) as ServiceName[];
  for (const service of services) {
    // Outbox rows: the thread's id in the subject, headers or payload (thread ids are random and
    // tenant-unique), or a run request of the thread (by its request id).
    const removed = await sql.query<{ id: string }>(
      `delete from ${tableOf(service, 'outbox')} where
         (strpos(subject, ?) > 0 or strpos(payload::text, ?) > 0 or strpos(headers::text, ?) > 0
          or exists (select 1 from unnest(?::text[]) rid where strpos(payload::text, '"requestId": "' || rid || '"') > 0))
         and (strpos(subject, ?) > 0 or strpos(payload::text, ?) > 0)
       returning id`,
      [threadId, threadId, threadId, requestIdArray, tenantId, tenantId],
    );
    add(service, 'outbox', removed.length);
    for (const r of removed) ids.add(r.id);
    add(
      service,
      'failed_messages',
      await sql.run(
        `delete from ${tableOf(service, 'failed_messages')} where strpos(payload, ?) > 0 or strpos(subject, ?) > 0`,
        [threadId, threadId],
      ),
    );
  }
  const idArray = `{${[...ids].map(pgArrayItem).join(',')}}`;
  for (const service of services) {
    add(
      service,
      'inbox',
      await sql.run(`delete from ${tableOf(service, 'inbox')} where message_id = any(?::text[])`, [idArray]),
    );
  }

  const byThread = [tenantId, threadId];
  switch (key) {
    case 'destroy':
      // Its content anywhere else — old stream messages, exports, copies of the log — cannot be opened again.
      add(
        'orchestrator',
        'thread_keys',
        await sql.run(`delete from ${o('thread_keys')} where tenant_id = ? and thread_id = ?`, byThread),
      );
      break;
    case 'detach':
      await sql.run(
        `update ${o('thread_keys')} set thread_id = 'detached:' || kid, subject = '' where tenant_id = ? and thread_id = ?`,
        byThread,
      );
      break;
    default: {
      const _exhaustive: never = key;
      throw new Error(`unknown key disposal ${String(_exhaustive)}`);
    }
  }
  for (const table of ['thread_events', 'thread_snapshots', 'thread_messages', 'runs', 'threads']) {
    add(
      'orchestrator',
      table,
      await sql.run(`delete from ${o(table)} where tenant_id = ? and thread_id = ?`, byThread),
    );
  }
  // Completion webhooks of the thread's runs: their bodies hold its ids, requests and output.
  add(
    'orchestrator',
    'webhook_deliveries',
    await sql.run(
      `delete from ${o('webhook_deliveries')} where tenant_id = ?
         and (body->>'threadId' = ? or body->>'requestId' = any(?::text[]))`,
      [tenantId, threadId, requestIdArray],
    ),
  );
  // A schedule's tick history stays (it decides nothing again), but no longer names the thread's runs.
  add(
    'orchestrator',
    'schedule_ticks',
    await sql.run(
      `update ${o('schedule_ticks')} set request_id = null where tenant_id = ? and request_id = any(?::text[])`,
      [tenantId, requestIdArray],
    ),
  );
  add(
    'orchestrator',
    'schedules',
    await sql.run(
      `update ${o('schedules')} set last_thread_id = null, last_run_id = null where tenant_id = ? and last_thread_id = ?`,
      byThread,
    ),
  );
  // What the thread's model calls spent stays (a tenant's usage outlives its threads), but no longer names
  // the thread, its runs or its calls: figures, an agent, a model and a time.
  await sql.run(
    `update ${o('model_usage')} set id = 'erased:' || md5(id), command_id = 'erased', thread_id = 'erased',
            run_id = 'erased'
      where tenant_id = ? and thread_id = ?`,
    byThread,
  );
  add(
    'tools',
    'effects',
    await sql.run(`delete from ${tableOf('tools', 'effects')} where key like ? or (tenant_id = ? and thread_id = ?)`, [
      `${likeEscape(`${tenantId}:${threadId}:`)}%`,
      tenantId,
      threadId,
    ]),
  );
  // The Idempotency-Keys whose answer named the thread (or one of its runs): their stored answers hold its ids.
  add(
    'gateway',
    'idempotency_keys',
    await sql.run(
      `delete from ${tableOf('gateway', 'idempotency_keys')} where tenant_id = ? and (thread_id = ? or key = any(?::text[]))`,
      [tenantId, threadId, requestIdArray],
    ),
  );
  const a = (t: string) => tableOf('approvals', t);
  const approvalIds = `(select id from ${a('approvals')} where tenant_id = ? and thread_id = ?)`;
  add(
    'approvals',
    'audit',
    await sql.run(`delete from ${a('audit')} where tenant_id = ? and approval_id in ${approvalIds}`, [
      tenantId,
      ...byThread,
    ]),
  );
  add(
    'approvals',
    'decisions',
    await sql.run(`delete from ${a('decisions')} where tenant_id = ? and approval_id in ${approvalIds}`, [
      tenantId,
      ...byThread,
    ]),
  );
  add(
    'approvals',
    'approvals',
    await sql.run(`delete from ${a('approvals')} where tenant_id = ? and thread_id = ?`, byThread),
  );
  return counts;
}

function pgArrayItem(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

function likeEscape(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The memory items a thread's runs wrote (their provenance names the thread), in the caller's
 * transaction; 0 when the memory schema is not there.
 */
export async function removeThreadMemory(sql: SqlExecutor, tenantId: string, threadId: string): Promise<number> {
  const items = tableOf('memory', 'items');
  const [present] = await sql.query<{ ok: boolean }>(`select to_regclass(?) is not null as ok`, [items]);
  if (!present?.ok) return 0;
  return sql.run(`delete from ${items} where tenant_id = ? and provenance->>'threadId' = ?`, [tenantId, threadId]);
}

/** What a thread's erasure tombstone is filed under: it names no thread, like a subject's. */
export function threadErasureHash(tenantId: string, threadId: string): string {
  return erasureTombstoneHash(tenantId, `thread:${threadId}`);
}

/** sha256(tenant NUL subject), hex: identifies an erasure request without naming its subject. */
export function erasureTombstoneHash(tenantId: string, subject: string): string {
  return createHash('sha256').update(`${tenantId}\u0000${subject}`, 'utf8').digest('hex');
}

export interface ErasureTombstone {
  id: number;
  tenantId: string;
  subjectHash: string;
  counts: Record<string, number>;
  operator: string;
  erasedAt: string;
}

export async function writeErasureTombstone(
  sql: SqlExecutor,
  t: { tenantId: string; subjectHash: string; counts: Record<string, number>; operator: string },
): Promise<number> {
  const rows = await sql.query<{ id: string | number }>(
    `insert into ${tableOf('orchestrator', 'erasures')} (tenant_id, subject_hash, counts, operator)
     values (?, ?, ?::jsonb, ?) returning id`,
    [t.tenantId, t.subjectHash, JSON.stringify(t.counts), t.operator],
  );
  return Number(rows[0]!.id);
}

export async function findErasureTombstones(
  sql: SqlExecutor,
  subjectHashes: readonly string[],
): Promise<ErasureTombstone[]> {
  if (subjectHashes.length === 0) return [];
  const rows = await sql.query<{
    id: string | number;
    tenant_id: string;
    subject_hash: string;
    counts: Record<string, number>;
    operator: string;
    erased_at: string;
  }>(
    `select id, tenant_id, subject_hash, counts, operator, ${isoColumn('erased_at')}
     from ${tableOf('orchestrator', 'erasures')} where subject_hash = any(?::text[]) order by id`,
    [`{${subjectHashes.map(pgArrayItem).join(',')}}`],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    tenantId: r.tenant_id,
    subjectHash: r.subject_hash,
    counts: r.counts,
    operator: r.operator,
    erasedAt: r.erased_at,
  }));
}

/** Memory items a subject owns or is about, per tenant (what forget-subject would erase). */
export async function countMemoryOfSubject(
  sql: SqlExecutor,
  subject: string,
  tenantId?: string,
): Promise<{ tenantId: string; items: number }[]> {
  const params: unknown[] = [subject, subject];
  let tenant = '';
  if (tenantId !== undefined) {
    tenant = 'and tenant_id = ?';
    params.push(tenantId);
  }
  const rows = await sql.query<{ tenant_id: string; n: number }>(
    `select tenant_id, count(*)::int as n from ${tableOf('memory', 'items')}
     where (owner = ? or subject = ?) ${tenant} group by tenant_id order by tenant_id`,
    params,
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, items: r.n }));
}

/**
 * The Idempotency-Keys a principal sent (their stored answers name what it created or decided), in the
 * caller's transaction; 0 when the gateway schema is not there.
 */
export async function removeSubjectIdempotencyKeys(
  sql: SqlExecutor,
  tenantId: string,
  subject: string,
): Promise<number> {
  const keys = tableOf('gateway', 'idempotency_keys');
  const [present] = await sql.query<{ ok: boolean }>(`select to_regclass(?) is not null as ok`, [keys]);
  if (!present?.ok) return 0;
  return sql.run(`delete from ${keys} where tenant_id = ? and principal_id = ?`, [tenantId, subject]);
}
