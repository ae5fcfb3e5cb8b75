import type { JetStreamManager } from 'nats';
import {
  findErasureTombstones,
  lockThread,
  removeThreadEverywhere,
  removeThreadMemory,
  threadErasureHash,
  withServiceTx,
  writeErasureTombstone,
  type Database,
} from '@ratchet/adapters';
import { decideErasure, type ErasureDecision } from '@ratchet/domain';
import { purgeSubjects } from './thread-retention';

export type ThreadErasure =
  | { status: 'erased' | 'already'; removed: Record<string, number> }
  | { status: Exclude<ErasureDecision, 'erase' | 'already'> };

/**
 * Erases a thread of `tenantId` (architecture §9): in one transaction over every schema, after locking
 * its projection row and checking no run is going, its log, snapshot, projection, conversation and
 * runs, its effect-ledger rows, its approvals with their decisions and audit, the outbox, inbox and
 * failed rows naming it, and the memory items its runs wrote — and a tombstone in
 * `orchestrator.erasures` (tenant, a hash of the thread id, the counts, who) in their place. Then, once
 * committed, its messages on the EVENTS stream are purged; a purge that fails is done again by the next
 * DELETE, which finds the tombstone and answers as done.
 */
export async function eraseThread(
  db: Database,
  jsm: JetStreamManager,
  /** The EVENTS stream and the thread's subjects on it (`threadFeedSubjects`). */
  target: { eventsStream: string; eventsSubjects: readonly string[] },
  tenantId: string,
  threadId: string,
  by: string,
): Promise<ThreadErasure> {
  const hash = threadErasureHash(tenantId, threadId);
  const decided = await withServiceTx(db, async (sql) => {
    const thread = await lockThread(sql, tenantId, threadId);
    const [active] = await sql.query<{ n: number }>(
      `select count(*)::int as n from ${sql.table('runs')}
        where tenant_id = ? and thread_id = ? and status in ('queued', 'running')`,
      [tenantId, threadId],
    );
    const tombstone = (await findErasureTombstones(sql, [hash])).some((t) => t.tenantId === tenantId);
    const decision = decideErasure({ thread, activeRuns: active?.n ?? 0, tombstone });
    switch (decision) {
      case 'busy':
      case 'not-found':
        return { status: decision } as const;
      case 'already':
        return { status: 'already', removed: {} } as const;
      case 'erase': {
        const counts = await removeThreadEverywhere(sql, tenantId, threadId, 'destroy');
        counts['memory.items'] = await removeThreadMemory(sql, tenantId, threadId);
        const removed = Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));
        await writeErasureTombstone(sql, {
          tenantId,
          subjectHash: hash,
          counts: { threads: 1, ...removed },
          operator: by,
        });
        return { status: 'erased', removed } as const;
      }
      default: {
        const _exhaustive: never = decision;
        return _exhaustive;
      }
    }
  });
  if (decided.status !== 'erased' && decided.status !== 'already') return decided;
  const purged = await purgeSubjects(jsm, target.eventsStream, target.eventsSubjects);
  return purged > 0
    ? { ...decided, removed: { ...decided.removed, [`nats.${target.eventsStream}`]: purged } }
    : decided;
}
