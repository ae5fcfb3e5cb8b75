import { Command } from 'commander';
import type { GatewayOptions } from '@ratchet/operator';
import { decideApproval, listApprovals, type ApprovalsListOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { parsePositiveInt } from '../cli.parse';
import { withGatewayOptions } from '../gateway-options';

export function approvalsCommand(): Command {
  const approvals = new Command('approvals').description(
    'approvals and escalations through the gateway: list, approve, reject (your roles and four-eyes apply)',
  );
  approvals.addCommand(
    withGatewayOptions(
      new Command('list')
        .description('the approvals you may see, newest first')
        .option('--status <status>', 'pending, granted, rejected, expired, resolved, cancelled, completed or failed')
        .option('--thread <threadId>', 'only this thread')
        .option('--agent <agent>', 'only runs of this agent')
        .option('--older-than <duration>', 'requested at least this long ago (90s, 15m, 2h, 1d)')
        .option('--limit <n>', 'at most this many (500)', parsePositiveInt),
    )
      .addHelpText(
        'after',
        '\nExamples:\n  $ ratchet approvals list --status pending\n  $ ratchet approvals list --status pending --older-than 1h --json',
      )
      .action(async (opts: ApprovalsListOptions, cmd: Command) => {
        await listApprovals(commandContext(cmd), opts);
      }),
  );
  for (const [name, decision, help] of [
    ['approve', 'approve', 'let the tool call run'],
    ['reject', 'reject', 'refuse the tool call (the model sees the refusal)'],
  ] as const) {
    approvals.addCommand(
      withGatewayOptions(
        new Command(name)
          .description(help)
          .argument('<approvalId>', 'the approval id (from approvals list)')
          .option('--reason <text>', 'why (kept in the audit trail)'),
      )
        .addHelpText(
          'after',
          `\nExamples:\n  $ ratchet approvals ${name} <approvalId> --reason "checked with the customer"`,
        )
        .action(async (id: string, opts: GatewayOptions & { reason?: string }, cmd: Command) => {
          await decideApproval(commandContext(cmd), id, decision, opts);
        }),
    );
  }
  return approvals;
}
