import {
  ThreadsUsageReply,
  threadsSubject,
  UsageDimension,
  usageDimensionsOf,
  utcMonthStart,
  type ThreadsUsageRequest,
  type UsageFigures,
  type UsageGroup,
} from '@ratchet/contracts';
import { assertToken, type CommandContext } from '../context';
import { CliError, UsageError } from '../errors';
import { table } from '../format';
import { askOrchestrators } from '../orchestrator-request';

export interface UsageOptions {
  tenant: string;
  /** Calls answered at or after this time (default: the first of the current UTC month). */
  from?: Date;
  /** Calls answered before this time. */
  to?: Date;
  /** Comma-separated dimensions. */
  by?: string;
  agent?: string;
  model?: string;
  run?: string;
  limit: number;
}

/** Column titles of the dimensions. */
const TITLES: Record<UsageDimension, string> = {
  day: 'DAY',
  month: 'MONTH',
  agent: 'AGENT',
  model: 'MODEL',
  run: 'RUN',
};
const KEYS: Record<UsageDimension, keyof UsageGroup> = {
  day: 'day',
  month: 'month',
  agent: 'agent',
  model: 'model',
  run: 'runId',
};

/** What a tenant's model calls spent, asked of the orchestrators (`<prefix>.threads.<tenant>.usage`). */
export async function showUsage({ config, out }: CommandContext, opts: UsageOptions, now = Date.now()): Promise<void> {
  assertToken('tenant', opts.tenant);
  const by = dimensionsOf(opts.by);
  const from = (opts.from ?? utcMonthStart(now)).toISOString();
  const to = opts.to?.toISOString();
  if (to !== undefined && to <= from) throw new UsageError(`--to (${to}) must be after --from (${from})`);
  const request: ThreadsUsageRequest = {
    from,
    by,
    limit: opts.limit,
    ...(to !== undefined ? { to } : {}),
    ...(opts.agent !== undefined ? { agent: opts.agent } : {}),
    ...(opts.model !== undefined ? { model: opts.model } : {}),
    ...(opts.run !== undefined ? { runId: opts.run } : {}),
  };
  const subject = threadsSubject(config.RATCHET_SUBJECT_PREFIX, opts.tenant, 'usage');
  const reply = ThreadsUsageReply.parse(await askOrchestrators(config, subject, request, 'usage'));
  if (!reply.ok) throw new CliError(reply.error.message, undefined, `usage.${reply.error.code}`);
  const { usage } = reply;
  if (out.json) {
    out.jsonLine(usage);
    return;
  }
  const figures = (f: UsageFigures) => [
    String(f.calls),
    String(f.inputTokens),
    String(f.outputTokens),
    String(f.totalTokens),
    f.unpricedCalls === f.calls && f.calls > 0 ? '-' : String(f.cost),
    String(f.abortedCalls),
  ];
  const lines = table([
    [...by.map((d) => TITLES[d]), 'CALLS', 'INPUT', 'OUTPUT', 'TOTAL', 'COST', 'ABORTED'],
    ...usage.groups.map((g) => [...by.map((d) => String(g[KEYS[d]] ?? '-')), ...figures(g)]),
    ...(by.length > 0 ? [] : [figures(usage.total)]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  const window = `${usage.from} to ${usage.to ?? 'now'}`;
  out.note(
    `tenant ${opts.tenant}, ${window}: ${usage.total.calls} calls, ${usage.total.totalTokens} tokens` +
      `, cost ${usage.total.cost}` +
      (usage.total.unpricedCalls > 0 ? ` (${usage.total.unpricedCalls} calls of unpriced models not in it)` : '') +
      (usage.total.abortedCalls > 0 ? `, ${usage.total.abortedCalls} aborted (may have been billed)` : '') +
      (usage.truncated ? `; more groups than --limit ${opts.limit}, the total counts them all` : ''),
  );
}

function dimensionsOf(text: string | undefined): UsageDimension[] {
  const parsed = usageDimensionsOf(text?.trim() === '' ? undefined : text);
  if (parsed.ok) return parsed.dims;
  if ('unknown' in parsed)
    throw new UsageError(
      `--by takes ${UsageDimension.options.join(', ')} (comma-separated), not ${JSON.stringify(parsed.unknown)}`,
    );
  throw new UsageError(`--by names ${parsed.twice} twice`);
}
