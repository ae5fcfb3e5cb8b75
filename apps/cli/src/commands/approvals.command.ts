import { Command } from 'commander';
import type { GatewaySchemas } from '@ratchet/http-client';
import { assertToken, commandContext, plural, type CommandContext } from '../cli.context';
import { parsePositiveInt, table } from '../cli.parse';
import { call, gateway, withGatewayOptions, type GatewayOptions } from '../gateway';

type ApprovalView = GatewaySchemas['ApprovalView'];
type ApprovalStatus = NonNullable<GatewaySchemas['ApprovalView']['status']>;
type JsonValue = GatewaySchemas['JsonValue'];

export interface ApprovalsListOptions extends GatewayOptions {
  status?: string;
  thread?: string;
  agent?: string;
  olderThan?: string;
  limit?: number;
}

/** The approvals and escalations the credential may see (GET /v1/approvals), newest first. */
export async function listApprovals({ config, out }: CommandContext, opts: ApprovalsListOptions) {
  const target = gateway(config, opts);
  const query = {
    // The gateway answers 400 naming a bad status or limit: passed as typed, checked there.
    ...(opts.status !== undefined ? { status: opts.status as ApprovalStatus } : {}),
    ...(opts.thread !== undefined ? { threadId: opts.thread } : {}),
    ...(opts.agent !== undefined ? { agent: opts.agent } : {}),
    ...(opts.olderThan !== undefined ? { olderThan: opts.olderThan } : {}),
    ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
  };
  const { approvals } = await call(target, target.client.GET('/v1/approvals', { params: { query } }));
  if (out.json) {
    for (const a of approvals) out.jsonLine(a);
    return approvals;
  }
  if (approvals.length === 0) {
    out.note('no approvals match');
    return approvals;
  }
  const lines = table([
    ['ID', 'KIND', 'STATUS', 'TOOL', 'AGENT', 'THREAD', 'ROLE', 'YOU MAY', 'REQUESTED'],
    ...approvals.map((a) => [
      a.id,
      a.kind,
      a.status,
      a.tool,
      a.agent,
      a.threadId,
      `${a.role}${a.fourEyes ? ' (4 eyes)' : ''}`,
      a.choices.join('/') || '-',
      a.requestedAt,
    ]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(plural(approvals.length, 'approval'));
  return approvals;
}

/** Records a decision (POST /v1/approvals/:id/decision); the gateway checks the role and four-eyes. */
export async function decideApproval(
  { config, out }: CommandContext,
  approvalId: string,
  decision: 'approve' | 'reject' | 'happened' | 'retry' | 'fail',
  opts: GatewayOptions & { reason?: string; result?: unknown },
): Promise<ApprovalView> {
  assertToken('approval', approvalId);
  const target = gateway(config, opts);
  const approval = await call(
    target,
    target.client.POST('/v1/approvals/{id}/decision', {
      params: { path: { id: approvalId } },
      body: {
        decision,
        reason: opts.reason ?? '',
        ...(opts.result !== undefined ? { result: opts.result as JsonValue } : {}),
      },
    }),
  );
  if (out.json) out.jsonLine(approval);
  else
    out.line(
      `${out.style('green', '✔')} ${approval.id} ${approval.status} (${decision} by ${approval.decision?.by ?? '?'}): ${approval.tool} on ${approval.threadId}`,
    );
  return approval;
}

export function approvalsCommand(): Command {
  const approvals = new Command('approvals').description(
    'approvals and escalations through the gateway: list, approve, reject (your roles and four-eyes apply)',
  );
  approvals.addCommand(
    withGatewayOptions(
      new Command('list')
        .description('the approvals you may see, newest first')
        .option('--status <status>', 'pending, granted, rejected, expired, resolved or cancelled')
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
