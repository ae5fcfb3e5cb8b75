import {
  findErasureTombstones,
  MemoryClient,
  MemoryItemsRepository,
  sqlExecutor,
  writeErasureTombstone,
  type Database,
} from '@ratchet/adapters';
import {
  countMemoryOfSubject,
  erasureTombstoneHash,
  removeSubjectIdempotencyKeys,
  threadsOfPrincipal,
} from '@ratchet/adapters/operator';
import { MEMORY_ADMIN_ROLE } from '@ratchet/domain';
import { assertToken, openSchema, plural, safeUserName, withNats, withSchema, type CommandContext } from '../context';
import { CliError, EXIT, PG, UsageError, pgCode } from '../errors';
import {
  addCounts,
  eventsStream,
  inTransaction,
  nonZero,
  purgeThreadSubject,
  removeThreadRows,
  total,
} from '@ratchet/platform';
import { keyOf } from '../ops/thread-selection';

export interface EraseOptions {
  subject: string;
  tenant?: string;
  dryRun?: boolean;
  operator?: string;
}

/** How memory was reached: through the memory service (forget-subject), or its schema directly. */
export type MemoryPath = 'service' | 'database' | 'count';

export interface EraseReport {
  dryRun: boolean;
  /** sha256(tenant NUL subject) per tenant: what the tombstones hold instead of the subject. */
  tenants: {
    tenantId: string;
    subjectHash: string;
    threads: string[];
    removed: Record<string, number>;
    tombstoneId?: number;
  }[];
  memory: MemoryPath | 'none';
  total: number;
  /** Tombstones of earlier erasures of this subject (when this run found nothing left). */
  earlier: { tenantId: string; erasedAt: string; operator: string }[];
}

/** The principal the CLI acts as towards the memory service: an admin may forget any subject. */
const CLI_PRINCIPAL = { id: 'ratchet-cli', roles: [MEMORY_ADMIN_ROLE] };

/**
 * Erases what Ratchet holds about one principal: every thread with a run that principal started (its
 * events, snapshot, projection, runs, EVENTS stream messages, effect-ledger rows, approvals with their
 * decisions and audit, outbox/inbox/failed rows naming it) and the memory items it owns or is about.
 * Leaves one tombstone per tenant in orchestrator.erasures: the tenant, sha256(tenant NUL subject), the
 * counts per table and stream, the time and the operator — never the subject.
 */
export async function erase({ config, out }: CommandContext, opts: EraseOptions): Promise<number> {
  const subject = opts.subject?.trim();
  if (!subject) throw new UsageError('give the principal to erase with --subject <principal>');
  if (opts.tenant !== undefined) assertToken('tenant', opts.tenant);
  const dryRun = opts.dryRun === true;
  const operator = opts.operator ?? process.env['USER'] ?? safeUserName();
  const report = await withSchema(config, 'orchestrator', async (db) => {
    const threads = await threadsOfPrincipal(db.sql, subject, opts.tenant);
    const busy = threads.filter((t) => t.busy);
    if (busy.length > 0) {
      throw new CliError(
        `${plural(busy.length, 'thread')} of this subject still have a run going (${busy.map(keyOf).join(', ')}): ` +
          'cancel them or let them finish, then erase again. Nothing was removed.',
        undefined,
        'erase.busy',
      );
    }
    const memoryCounts = await countMemory(db, subject, opts.tenant);
    const tenants = [...new Set([...threads.map((t) => t.tenantId), ...memoryCounts.map((m) => m.tenantId)])].sort();
    const perTenant = new Map(
      tenants.map((tenantId) => [
        tenantId,
        {
          tenantId,
          subjectHash: erasureTombstoneHash(tenantId, subject),
          threads: threads.filter((t) => t.tenantId === tenantId).map((t) => t.threadId),
          removed: {} as Record<string, number>,
          tombstoneId: undefined as number | undefined,
        },
      ]),
    );
    let memory: EraseReport['memory'] = 'none';
    await withNats(config, async (nc) => {
      // 1. The EVENTS stream (a rerun after a failure below finds the threads again and purges nothing).
      for (const t of threads) {
        const n = await purgeThreadSubject(nc, config, t, dryRun);
        addCounts(perTenant.get(t.tenantId)!.removed, { [`nats.${eventsStream(config)}`]: n });
      }
      // 2. Memory: through the memory service when it answers, else in its schema directly.
      if (memoryCounts.length > 0) {
        if (dryRun) {
          memory = 'count';
          for (const m of memoryCounts) addCounts(perTenant.get(m.tenantId)!.removed, { 'memory.items': m.items });
        } else {
          memory = 'service';
          const client = new MemoryClient(nc, { subjectPrefix: config.RATCHET_SUBJECT_PREFIX, timeoutMs: 3_000 });
          for (const m of memoryCounts) {
            let erased: number;
            try {
              const reply = await client.forgetSubject(m.tenantId, { principal: CLI_PRINCIPAL, subject });
              if (!reply.ok) throw new CliError(`memory service refused forget-subject: ${reply.error.message}`);
              erased = reply.erased;
            } catch (error) {
              if ((error as { code?: unknown }).code !== 'memory.unavailable') throw error;
              memory = 'database';
              erased = await forgetInMemorySchema(config, m.tenantId, subject);
            }
            addCounts(perTenant.get(m.tenantId)!.removed, { 'memory.items': erased });
          }
        }
      }
    });
    // 3. Every schema's rows of those threads, and the tombstones, in one transaction.
    await inTransaction(db, dryRun, async (sql) => {
      for (const t of threads) addCounts(perTenant.get(t.tenantId)!.removed, await removeThreadRows(sql, t, 'destroy'));
      for (const entry of perTenant.values()) {
        // Data keys made for the subject's threads whose first write never committed (nothing else names them).
        const orphans = await sql.run(`delete from ${sql.table('thread_keys')} where tenant_id = ? and subject = ?`, [
          entry.tenantId,
          subject,
        ]);
        addCounts(entry.removed, { 'orchestrator.thread_keys': orphans });
        addCounts(entry.removed, {
          'gateway.idempotency_keys': await removeSubjectIdempotencyKeys(sql, entry.tenantId, subject),
        });
        entry.removed = nonZero(entry.removed);
        if (total(entry.removed) === 0) continue;
        entry.tombstoneId = await writeErasureTombstone(sql, {
          tenantId: entry.tenantId,
          subjectHash: entry.subjectHash,
          counts: { threads: entry.threads.length, ...entry.removed },
          operator,
        });
      }
    });
    const entries = [...perTenant.values()];
    const sum = entries.reduce((n, e) => n + total(e.removed), 0);
    const earlier =
      sum === 0
        ? (
            await findErasureTombstones(
              db.sql,
              opts.tenant !== undefined
                ? [erasureTombstoneHash(opts.tenant, subject)]
                : await tenantHashes(db, subject),
            )
          ).map((t) => ({ tenantId: t.tenantId, erasedAt: t.erasedAt, operator: t.operator }))
        : [];
    const result: EraseReport = {
      dryRun,
      tenants: entries.map((e) => ({
        ...e,
        ...(dryRun || e.tombstoneId === undefined ? { tombstoneId: undefined } : {}),
      })),
      memory,
      total: sum,
      earlier,
    };
    return result;
  });
  print(out, report);
  return EXIT.ok;
}

/** Hashes of this subject for every tenant that has an erasure tombstone (the hash is per tenant). */
async function tenantHashes(db: Database, subject: string): Promise<string[]> {
  const rows = await db.sql.query<{ tenant_id: string }>(
    `select distinct tenant_id from ${db.sql.table('erasures')} order by tenant_id`,
  );
  return rows.map((r) => erasureTombstoneHash(r.tenant_id, subject));
}

/** What memory holds about the subject, per tenant; none when the memory schema is not migrated. */
async function countMemory(db: Database, subject: string, tenant?: string) {
  try {
    return await countMemoryOfSubject(db.sql, subject, tenant);
  } catch (error) {
    if (pgCode(error) === PG.undefinedTable) return [];
    throw error;
  }
}

/** forget-subject without the memory service: the same repository call, in the memory schema. */
async function forgetInMemorySchema(config: CommandContext['config'], tenantId: string, subject: string) {
  const db = await openSchema(config, 'memory');
  try {
    return await db.orm.em
      .getConnection()
      .transactional((trx) =>
        new MemoryItemsRepository(sqlExecutor(db.orm, db.schema, trx)).forgetSubject(tenantId, subject),
      );
  } finally {
    await db.close();
  }
}

function print(out: CommandContext['out'], r: EraseReport): void {
  if (out.json) {
    out.jsonLine(r);
    return;
  }
  if (r.total === 0) {
    const seen = r.earlier.map((e) => `${e.tenantId} at ${e.erasedAt} by ${e.operator}`).join('; ');
    out.line(`${out.style('green', '✔')} nothing to erase for this subject${seen ? ` (already erased: ${seen})` : ''}`);
    return;
  }
  const verb = r.dryRun ? 'would remove' : 'removed';
  for (const t of r.tenants) {
    if (total(t.removed) === 0) continue;
    out.line(
      `${t.tenantId}: ${verb} ${plural(t.threads.length, 'thread')} (subject sha256 ${t.subjectHash.slice(0, 16)}…)`,
    );
    for (const [k, n] of Object.entries(t.removed)) out.line(`  ${k.padEnd(34)} ${n}`);
    if (t.tombstoneId !== undefined) out.line(out.style('dim', `  tombstone orchestrator.erasures #${t.tombstoneId}`));
  }
  const memory =
    r.memory === 'service'
      ? 'memory erased through the memory service (forget-subject)'
      : r.memory === 'database'
        ? 'memory service not answering: memory erased directly in the memory schema'
        : r.memory === 'count'
          ? 'memory counted in the memory schema'
          : 'memory held nothing about this subject';
  out.line(out.style('dim', memory));
  out.line(
    `${out.style('green', '✔')} ${r.dryRun ? 'dry run: would remove' : 'erased'} ${plural(r.total, 'row/message')}${r.dryRun ? '; nothing changed' : ''}`,
  );
}
