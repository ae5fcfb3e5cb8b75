import { Command } from 'commander';
import { applyRetention, type RetentionResult } from '@ratchet/platform';
import { assertToken, commandContext, plural, withNats, withSchema, type CommandContext } from '../cli.context';
import { EXIT } from '../cli.errors';
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

export function retentionCommand(): Command {
  const retention = new Command('retention').description(
    'apply the per-tenant retention policy (RATCHET_RETENTION) to finished threads',
  );
  retention.addCommand(
    new Command('run')
      .description('compact or drop the finished threads the policy selects (--dry-run: only say what)')
      .option('--dry-run', 'say what would be done; change nothing')
      .option('--tenant <tenant>', "only this tenant's threads")
      .addHelpText(
        'after',
        `
The policy comes from ${RETENTION_VARIABLE}: comma-separated <tenant|default>=<compact|drop>:<age>, e.g.
  ${RETENTION_VARIABLE}=default=compact:30d,acme=drop:90d
A thread qualifies when it is finished (no active or queued run) and its projection has not changed for
<age> (units m, h, d, w). Tenants without a rule and without a default are left alone.

compact  the thread's events but the last are folded into one snapshot (orchestrator.thread_snapshots)
         and deleted; the thread stays resumable, replay --verify and export start from the snapshot.
drop     the thread is removed everywhere: events, snapshot, projection, runs, its EVENTS stream
         messages, effect-ledger rows, approvals (decisions, audit), outbox/inbox rows naming it.

Exit 1 when a thread could not be handled (the others are still done); 78 when ${RETENTION_VARIABLE} is invalid.

Examples:
  $ ${RETENTION_VARIABLE}=default=compact:30d,acme=drop:90d ratchet retention run --dry-run
  $ ratchet retention run --tenant acme --json`,
      )
      .action(async (opts: RetentionOptions, cmd: Command) => {
        process.exitCode = await retentionRun(commandContext(cmd), opts);
      }),
  );
  return retention;
}
