import type { GatewaySchemas } from '@ratchet/http-client';
import { assertToken, plural, type CommandContext } from '../context';
import { table } from '../format';
import { call, gateway, type GatewayOptions } from '../gateway';

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
