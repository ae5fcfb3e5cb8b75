import type { NatsConnection } from 'nats';
import { listIdleThreads, listTenantsWithThreads, type Database } from '@ratchet/adapters';
import type { TopologySettings } from '../service/topology';
import { ruleFor, type RetentionPolicy, type RetentionRule } from './retention-policy';
import {
  addCounts,
  compactThread,
  eventsStream,
  inTransaction,
  nonZero,
  purgeThreadSubject,
  removeThreadRows,
} from './thread-retention';

/** One line of a retention report: what retention did (or would do) to one thread. */
export interface RetentionResult {
  tenantId: string;
  threadId: string;
  action: RetentionRule['action'];
  rule: string;
  outcome: 'compacted' | 'dropped' | 'skipped';
  dryRun: boolean;
  reason?: string;
  snapshotVersion?: number;
  eventsRemoved?: number;
  removed?: Record<string, number>;
}

export interface RetentionPass {
  policy: RetentionPolicy;
  /** Threads idle since before `now - age` qualify. */
  now: Date;
  dryRun: boolean;
  /** Only this tenant's threads. */
  tenant?: string | undefined;
  /** Tenants without a rule (and no default): reported here, left alone. */
  onUnruled?: (tenantId: string) => void;
  /** Each thread's result as it is done. */
  onResult?: (result: RetentionResult) => void;
}

/**
 * Applies a retention policy to finished threads (no active or queued run) whose projection has not
 * changed for the rule's age: `compact` folds their events behind one snapshot, `drop` removes the
 * thread everywhere (log, projection, runs, EVENTS stream messages, effect ledger, approvals,
 * outbox/inbox rows). Each thread is its own transaction; one that fails is reported with outcome
 * `skipped` and its reason in `failures`, and the others are still done. Running it again is safe.
 * Used by `ratchet retention run` and by the orchestrator's built-in housekeeping.
 */
export async function applyRetention(
  db: Database,
  nc: NatsConnection,
  config: TopologySettings,
  pass: RetentionPass,
): Promise<{ results: RetentionResult[]; failures: string[] }> {
  const results: RetentionResult[] = [];
  const failures: string[] = [];
  const tenants = pass.tenant !== undefined ? [pass.tenant] : await listTenantsWithThreads(db.sql);
  for (const tenantId of tenants) {
    const rule = ruleFor(pass.policy, tenantId);
    if (!rule) {
      pass.onUnruled?.(tenantId);
      continue;
    }
    const idleBefore = new Date(pass.now.getTime() - rule.idleMs).toISOString();
    for (const key of await listIdleThreads(db.sql, { tenantId, idleBefore })) {
      const { tenantId: t, threadId } = key;
      const base = {
        tenantId: t,
        threadId,
        action: rule.action,
        rule: `${rule.action}:${rule.idle}`,
        dryRun: pass.dryRun,
      };
      let result: RetentionResult;
      try {
        if (rule.action === 'compact') {
          const c = await compactThread(db, key, pass.dryRun);
          result =
            c.outcome === 'compacted'
              ? { ...base, outcome: 'compacted', snapshotVersion: c.snapshotVersion, eventsRemoved: c.eventsRemoved }
              : { ...base, outcome: 'skipped', reason: c.reason };
        } else {
          // The stream first: should the database part fail, the thread is still found by a rerun.
          const messages = await purgeThreadSubject(nc, config, key, pass.dryRun);
          const rows = await inTransaction(db, pass.dryRun, (sql) => removeThreadRows(sql, key, 'detach'));
          const removed = nonZero(addCounts({ [`nats.${eventsStream(config)}`]: messages }, rows));
          result = { ...base, outcome: 'dropped', removed };
        }
      } catch (error) {
        const reason = (error as Error).message.split('\n')[0]!;
        failures.push(`${t}/${threadId}: ${reason}`);
        result = { ...base, outcome: 'skipped', reason };
      }
      results.push(result);
      pass.onResult?.(result);
    }
  }
  return { results, failures };
}
