import type { ThreadsUsageRequest, UsageDimension, UsageFigures, UsageGroup, UsageReport } from '@ratchet/contracts';
import { Conditions, type SqlExecutor } from './sql';

/** The SQL of each dimension over `model_usage` aliased `u` (days and months in UTC). */
const DIMENSIONS: Readonly<Record<UsageDimension, { expression: string; key: keyof UsageGroup }>> = {
  day: { expression: `to_char(u.at at time zone 'UTC', 'YYYY-MM-DD')`, key: 'day' },
  month: { expression: `to_char(u.at at time zone 'UTC', 'YYYY-MM')`, key: 'month' },
  agent: { expression: 'u.agent', key: 'agent' },
  model: { expression: 'u.model', key: 'model' },
  run: { expression: 'u.run_id', key: 'runId' },
};

const FIGURES = `count(*) filter (where u.state = 'responded')::int as calls,
  coalesce(sum(u.input_tokens) filter (where u.state = 'responded'), 0)::bigint as input_tokens,
  coalesce(sum(u.output_tokens) filter (where u.state = 'responded'), 0)::bigint as output_tokens,
  coalesce(sum(u.cost_micros) filter (where u.state = 'responded'), 0)::bigint as cost_micros,
  count(*) filter (where u.state = 'responded' and u.cost_micros is null)::int as unpriced_calls,
  count(*) filter (where u.state = 'aborted')::int as aborted_calls`;

interface FiguresRow {
  calls: number;
  input_tokens: string | number;
  output_tokens: string | number;
  cost_micros: string | number;
  unpriced_calls: number;
  aborted_calls: number;
}

/**
 * What a tenant's model calls spent in a window, grouped by the request's dimensions (in their order), with
 * the window's total: the calls the log recorded an answer of (with their tokens as the provider reported
 * them) and the calls the log shows made without their answer used (aborted). Through `model_usage_at_idx`.
 */
export async function usageReport(sql: SqlExecutor, tenantId: string, q: ThreadsUsageRequest): Promise<UsageReport> {
  const where = new Conditions()
    .eq('u.tenant_id', tenantId)
    .and(`u.state in ('responded', 'aborted')`)
    .and('u.at >= ?::timestamptz', q.from)
    .eq('u.agent', q.agent)
    .eq('u.model', q.model)
    .eq('u.run_id', q.runId);
  if (q.to !== undefined) where.and('u.at < ?::timestamptz', q.to);
  const from = `from ${sql.table('model_usage')} u where ${where.toString()}`;
  const [total] = await sql.query<FiguresRow>(`select ${FIGURES} ${from}`, where.params);
  let groups: UsageGroup[] = [];
  let truncated = false;
  if (q.by.length > 0) {
    const dims = q.by.map((d, i) => `${DIMENSIONS[d].expression} as g${i}`);
    const positions = q.by.map((_, i) => String(i + 1)).join(', ');
    const rows = await sql.query<FiguresRow & Record<string, string>>(
      `select ${dims.join(', ')}, ${FIGURES} ${from} group by ${positions} order by ${positions} limit ?`,
      [...where.params, q.limit + 1],
    );
    truncated = rows.length > q.limit;
    groups = rows.slice(0, q.limit).map((r) => {
      const group: Record<string, unknown> = {};
      q.by.forEach((d, i) => (group[DIMENSIONS[d].key] = r[`g${i}`]));
      return { ...group, ...figuresOf(r) } as UsageGroup;
    });
  }
  return {
    from: q.from,
    ...(q.to !== undefined ? { to: q.to } : {}),
    by: q.by,
    groups,
    truncated,
    total: figuresOf(total!),
  };
}

function figuresOf(r: FiguresRow): UsageFigures {
  const inputTokens = Number(r.input_tokens);
  const outputTokens = Number(r.output_tokens);
  return {
    calls: r.calls,
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    // Summed in whole millionths; shown in the currency.
    cost: Number(r.cost_micros) / 1_000_000,
    unpricedCalls: r.unpriced_calls,
    abortedCalls: r.aborted_calls,
  };
}
