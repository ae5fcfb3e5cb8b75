import type { GatewaySchemas } from '@ratchet/http-client';
import { assertToken, plural, type CommandContext } from '../context';
import { table } from '../format';
import { UsageError } from '../errors';
import { call, gateway, type GatewayOptions } from '../gateway';

type ApprovalView = GatewaySchemas['ApprovalView'];
type JsonValue = GatewaySchemas['JsonValue'];
type WaitpointStatus = 'pending' | 'completed' | 'failed' | 'expired' | 'cancelled';

export interface CompleteWaitpointOptions extends GatewayOptions {
  /** The result, as JSON text. */
  result?: string;
  /** Instead of a result: the job failed with this code … */
  error?: string;
  /** … and this message. */
  message?: string;
}

export interface WaitpointsListOptions extends GatewayOptions {
  status?: string;
  thread?: string;
  agent?: string;
  limit?: number;
}

/** Lists the tenant's waitpoints (GET /v1/waitpoints): what runs wait for from the outside world. */
export async function listWaitpoints({ config, out }: CommandContext, opts: WaitpointsListOptions) {
  const target = gateway(config, opts);
  const query = {
    // The gateway answers 400 naming a bad status or limit: passed as typed, checked there.
    ...(opts.status !== undefined ? { status: opts.status as WaitpointStatus } : {}),
    ...(opts.thread !== undefined ? { threadId: opts.thread } : {}),
    ...(opts.agent !== undefined ? { agent: opts.agent } : {}),
    ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
  };
  const { waitpoints } = await call(target, target.client.GET('/v1/waitpoints', { params: { query } }));
  if (out.json) {
    for (const w of waitpoints) out.jsonLine(w);
    return waitpoints;
  }
  if (waitpoints.length === 0) {
    out.note('no waitpoints match');
    return waitpoints;
  }
  const lines = table([
    ['ID', 'STATUS', 'TOOL', 'AGENT', 'THREAD', 'RUN', 'EXPIRES', 'DECIDED BY'],
    ...waitpoints.map((w) => [
      w.id,
      w.status,
      w.tool,
      w.agent,
      w.threadId,
      w.runId,
      w.expiresAt ?? '-',
      w.decision?.by ?? '-',
    ]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(plural(waitpoints.length, 'waitpoint'));
  return waitpoints;
}

/**
 * Completes a waitpoint (POST /v1/waitpoints/:id/complete): with `--result <json>` (checked against the
 * schema its tool declared), or `--error <code> --message <text>` when the job outside failed.
 */
export async function completeWaitpoint(
  { config, out }: CommandContext,
  waitpointId: string,
  opts: CompleteWaitpointOptions,
): Promise<ApprovalView> {
  assertToken('waitpoint', waitpointId);
  if ((opts.result === undefined) === (opts.error === undefined))
    throw new UsageError('give either --result <json> (the job finished) or --error <code> (it failed)');
  if (opts.message !== undefined && opts.error === undefined) throw new UsageError('--message goes with --error');
  let body: { result: JsonValue } | { error: { code: string; message: string } };
  if (opts.result !== undefined) {
    try {
      body = { result: JSON.parse(opts.result) as JsonValue };
    } catch {
      throw new UsageError(`invalid --result: not JSON (${opts.result.slice(0, 80)})`);
    }
  } else {
    body = { error: { code: opts.error!, message: opts.message ?? '' } };
  }
  const target = gateway(config, opts);
  const waitpoint = await call(
    target,
    target.client.POST('/v1/waitpoints/{id}/complete', { params: { path: { id: waitpointId } }, body }),
  );
  if (out.json) out.jsonLine(waitpoint);
  else
    out.line(
      `${out.style('green', '✔')} ${waitpoint.id} ${waitpoint.status} by ${waitpoint.decision?.by ?? '?'}: run ${waitpoint.runId} on ${waitpoint.threadId} goes on`,
    );
  return waitpoint;
}
