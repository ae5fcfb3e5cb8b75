import { applyRetention, type RetentionResult } from '@ratchet/platform';
import { assertToken, plural, withNats, withSchema, type CommandContext } from '../context';
import { EXIT } from '../errors';
import { parseRetentionPolicy, RETENTION_VARIABLE } from '../ops/retention-policy';

export type { RetentionResult };

export interface RetentionOptions {
  dryRun?: boolean;
  tenant?: string;
}

/**
 * Applies the per-tenant policy of RATCHET_RETENTION to finished threads (no active or queued run) whose
 * projection has not changed for the rule's age: `compact` folds their events behind one snapshot,
 * `drop` removes the thread everywhere (log, projection, runs, EVENTS stream messages, effect ledger,
 * approvals, outbox/inbox rows). Exit 1 when a thread could not be handled. The orchestrator runs the
 * same pass as built-in housekeeping (docs/runbooks/retention.md).
 */
export async function retentionRun(
  { config, out }: CommandContext,
  opts: RetentionOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const policy = parseRetentionPolicy(env[RETENTION_VARIABLE]);
  if (opts.tenant !== undefined) assertToken('tenant', opts.tenant);
  const dryRun = opts.dryRun === true;
  const { results, failures } = await withSchema(config, 'orchestrator', (db) =>
    withNats(config, (nc) =>
      applyRetention(db, nc, config, {
        policy,
        now: new Date(),
        dryRun,
        tenant: opts.tenant,
        onUnruled: (tenantId) => out.note(`${tenantId}: no rule (and no default) in ${RETENTION_VARIABLE}, left alone`),
        onResult: (result) => print(out, result),
      }),
    ),
  );
  const n = (o: RetentionResult['outcome']) => results.filter((r) => r.outcome === o).length;
  if (out.json) {
    out.jsonLine({ summary: { dryRun, compacted: n('compacted'), dropped: n('dropped'), skipped: n('skipped') } });
  } else {
    const verb = dryRun ? 'would be' : 'were';
    out.line(
      `${failures.length > 0 ? out.style('red', '✘') : out.style('green', '✔')} ${plural(n('compacted'), 'thread')} ${verb} compacted, ${n('dropped')} ${verb} dropped, ${n('skipped')} skipped${dryRun ? ' (dry run: nothing changed)' : ''}`,
    );
  }
  return failures.length > 0 ? EXIT.failure : EXIT.ok;
}

function print(out: CommandContext['out'], r: RetentionResult): void {
  if (out.json) {
    out.jsonLine(r);
    return;
  }
  const would = r.dryRun ? 'would ' : '';
  const key = `${r.tenantId}/${r.threadId}`;
  if (r.outcome === 'compacted') {
    out.line(
      `${out.style('green', `${would}compact`.padEnd(14))} ${key}: ${plural(r.eventsRemoved ?? 0, 'event')} up to v${r.snapshotVersion} → one snapshot (${r.rule})`,
    );
  } else if (r.outcome === 'dropped') {
    const what = Object.entries(r.removed ?? {})
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    out.line(`${out.style('yellow', `${would}drop`.padEnd(14))} ${key}: ${what || 'nothing left'} (${r.rule})`);
  } else {
    out.line(`${out.style('dim', 'skip'.padEnd(14))} ${key}: ${r.reason} (${r.rule})`);
  }
}
