import type { GatewaySchemas } from '@ratchet/http-client';
import { assertToken, plural, type CommandContext } from '../context';
import { UsageError } from '../errors';
import { table } from '../format';
import { call, gateway, type GatewayOptions } from '../gateway';

export const RUN_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
type RunStatus = (typeof RUN_STATUSES)[number];
/**
 * What a running run may wait for (`--waiting`): a human on an approval, the outside world on a waitpoint,
 * an operator on an uncertain effect, any of them.
 */
export const RUN_WAITS = ['approval', 'waitpoint', 'operator', 'any'] as const;
type RunWait = (typeof RUN_WAITS)[number];
type RunSummary = GatewaySchemas['RunList']['runs'][number];
const WAIT_NAMES: Record<NonNullable<RunSummary['waiting']>['on'], string> = {
  approval: 'an approval',
  waitpoint: 'a waitpoint',
  operator: 'an operator',
  admission: "room under the tenant's bound on runs in flight",
};

export interface RunsListOptions extends GatewayOptions {
  thread?: string;
  status?: string;
  waiting?: string;
  agent?: string;
  since?: Date;
  until?: Date;
  metadata: string[];
  limit: number;
}

/**
 * The runs of the credential's tenant (GET /v1/runs), newest start first, following the gateway's
 * pages until `--limit` runs are shown.
 */
export async function showRuns({ config, out }: CommandContext, opts: RunsListOptions): Promise<RunSummary[]> {
  if (opts.thread !== undefined) assertToken('thread', opts.thread);
  if (opts.status !== undefined && !(RUN_STATUSES as readonly string[]).includes(opts.status))
    throw new UsageError(`invalid --status ${JSON.stringify(opts.status)}: one of ${RUN_STATUSES.join(', ')}`);
  if (opts.waiting !== undefined && !(RUN_WAITS as readonly string[]).includes(opts.waiting))
    throw new UsageError(`invalid --waiting ${JSON.stringify(opts.waiting)}: one of ${RUN_WAITS.join(', ')}`);
  for (const pair of opts.metadata)
    if (!/^[^=]+=/.test(pair)) throw new UsageError(`invalid --metadata ${JSON.stringify(pair)}: expected key=value`);
  const target = gateway(config, opts);
  const rows: RunSummary[] = [];
  let cursor: string | undefined;
  do {
    const query = {
      limit: Math.min(200, opts.limit - rows.length),
      ...(opts.status !== undefined ? { status: opts.status as RunStatus } : {}),
      ...(opts.waiting !== undefined ? { waiting: opts.waiting as RunWait } : {}),
      ...(opts.agent !== undefined ? { agent: opts.agent } : {}),
      ...(opts.thread !== undefined ? { threadId: opts.thread } : {}),
      ...(opts.since !== undefined ? { since: opts.since.toISOString() } : {}),
      ...(opts.until !== undefined ? { until: opts.until.toISOString() } : {}),
      ...(opts.metadata.length ? { metadata: opts.metadata } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    };
    const page = await call(target, target.client.GET('/v1/runs', { params: { query } }));
    rows.push(...page.runs);
    cursor = page.nextCursor;
  } while (cursor !== undefined && rows.length < opts.limit);
  if (out.json) {
    for (const r of rows) out.jsonLine(r);
    return rows;
  }
  if (rows.length === 0) {
    out.note('no runs match');
    return rows;
  }
  const lines = table([
    ['RUN', 'THREAD', 'STATUS', 'AGENT', 'STEPS', 'STARTED', 'ENDED'],
    ...rows.map((r) => [
      r.runId,
      r.threadId,
      statusOf(r),
      `${r.agent}@${r.agentVersion}`,
      String(r.steps),
      r.startedAt ?? '-',
      r.endedAt ?? '-',
    ]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(
    `${plural(rows.length, 'run')}${cursor !== undefined ? ` (limit ${opts.limit}; raise --limit for more)` : ''}`,
  );
  return rows;
}

/** The run's status, and for a run that waits for a human, for what and until when. */
function statusOf(r: Pick<RunSummary, 'status' | 'waiting'>): string {
  if (!r.waiting) return r.status;
  return `${r.status}: waits for ${r.waiting.for ?? WAIT_NAMES[r.waiting.on]}${r.waiting.until ? ` until ${r.waiting.until}` : ''}`;
}

/** Asks the gateway to cancel a run (needs the runner role); the run ends with `run.cancelled`. */
export async function cancelRun(
  { config, out }: CommandContext,
  runId: string,
  opts: GatewayOptions & { reason: string },
): Promise<unknown> {
  assertToken('run', runId);
  const target = gateway(config, opts);
  const body = await call(
    target,
    target.client.POST('/v1/runs/{runId}/cancel', { params: { path: { runId } }, body: { reason: opts.reason } }),
  );
  if (out.json) out.jsonLine(body);
  else out.line(`${out.style('green', '✔')} cancelling ${runId} on ${body.threadId}: it ends with run.cancelled`);
  return body;
}
