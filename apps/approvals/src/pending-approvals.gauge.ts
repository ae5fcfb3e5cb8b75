import { ApprovalsRepository, type Database } from '@ratchet/adapters';
import { meter } from '@ratchet/platform';

/**
 * `ratchet.approvals.pending`: approvals and escalations waiting for a human, and
 * `ratchet.waitpoints.pending`: waitpoints waiting for the outside world — per tenant, read from the
 * approvals table.
 */
export function observePendingApprovals(db: Database): void {
  observe(db, 'ratchet.approvals.pending', 'Approvals and escalations waiting for a human', 'humans');
  observe(db, 'ratchet.waitpoints.pending', 'Waitpoints waiting for the outside world to complete them', 'waitpoints');
}

function observe(db: Database, name: string, description: string, what: 'humans' | 'waitpoints'): void {
  const gauge = meter().createObservableGauge(name, { description });
  // A tenant seen once keeps its series: zero when nothing of it waits any more.
  const seen = new Set<string>();
  gauge.addCallback(async (result) => {
    // A failed read reports nothing for this interval rather than a wrong zero.
    const rows = await new ApprovalsRepository(db.sql).pendingByTenant(what).catch(() => undefined);
    if (!rows) return;
    const counts = new Map(rows.map((r) => [r.tenantId, r.pending]));
    for (const tenant of counts.keys()) seen.add(tenant);
    for (const tenant of seen) result.observe(counts.get(tenant) ?? 0, { tenant });
  });
}
