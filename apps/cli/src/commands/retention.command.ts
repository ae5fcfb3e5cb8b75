import { Command } from 'commander';
import { RETENTION_VARIABLE } from '@ratchet/operator';
import { retentionRun, type RetentionOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';

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
