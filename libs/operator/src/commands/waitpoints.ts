import type { GatewaySchemas } from '@ratchet/http-client';
import { assertToken, type CommandContext } from '../context';
import { UsageError } from '../errors';
import { call, gateway, type GatewayOptions } from '../gateway';

type ApprovalView = GatewaySchemas['ApprovalView'];
type JsonValue = GatewaySchemas['JsonValue'];

export interface CompleteWaitpointOptions extends GatewayOptions {
  /** The result, as JSON text. */
  result?: string;
  /** Instead of a result: the job failed with this code … */
  error?: string;
  /** … and this message. */
  message?: string;
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
