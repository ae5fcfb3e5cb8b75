import { TenantCapCounters, TenantCapsRepository, type TenantCapsChange, type TenantCapsRow } from '@ratchet/adapters';
import { assertToken, plural, safeUserName, withSchema, type CommandContext } from '../context';
import { units } from '@ratchet/domain';
import { UsageError } from '../errors';
import { table } from '../format';

/** The most tokens a cap may be (per day or month). */
const MAX_CAP_TOKENS = 1_000_000_000_000;
/** The most a cost cap may be, in millionths (a billion of the currency). */
const MAX_CAP_COST_MICROS = 1_000_000_000_000_000;

/** An amount of the price table's currency (`25`, `0.5`) in millionths, or a usage error naming the option. */
export function parseCostAmount(option: string, text: string): number {
  const amount = /^\d+(\.\d{1,6})?$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isFinite(amount))
    throw new UsageError(
      `invalid ${option} ${JSON.stringify(text)}: expected an amount such as 25 or 0.50 (up to 6 decimals)`,
    );
  return Math.round(amount * 1_000_000);
}

/**
 * Sets (a number) or removes (null) a tenant's token caps, per UTC day and per UTC month
 * (docs/flow-control.md#token-and-cost-caps), as an operator: only this (the operator's access to the deployment)
 * changes a cap, never the tenant's own credential. Model calls decided from then on (within
 * TENANT_CAPS_CACHE_MS on every orchestrator) are held to them.
 */
export async function changeCaps(
  { config, out }: CommandContext,
  tenant: string,
  change: TenantCapsChange,
): Promise<TenantCapsRow | undefined> {
  assertToken('tenant', tenant);
  if (Object.values(change).every((v) => v === undefined))
    throw new UsageError(
      'name a cap: --day-tokens <n>, --month-tokens <n>, --day-cost <amount> or --month-cost <amount>',
    );
  for (const [option, v] of [
    ['--day-tokens', change.dayTokens],
    ['--month-tokens', change.monthTokens],
  ] as const)
    if (typeof v === 'number' && (!Number.isInteger(v) || v < 1 || v > MAX_CAP_TOKENS))
      throw new UsageError(`invalid ${option} ${v}: expected a whole number of tokens from 1 to ${MAX_CAP_TOKENS}`);
  for (const [option, v] of [
    ['--day-cost', change.dayCost],
    ['--month-cost', change.monthCost],
  ] as const)
    if (typeof v === 'number' && (!Number.isInteger(v) || v < 1 || v > MAX_CAP_COST_MICROS))
      throw new UsageError(
        `invalid ${option} ${units(v)}: expected an amount of the price table's currency from 0.000001 to ${units(MAX_CAP_COST_MICROS)}`,
      );
  const by = `cli:${process.env['USER'] ?? safeUserName()}`;
  const { after, counts } = await withSchema(config, 'orchestrator', async (db) => {
    const after = await new TenantCapsRepository(db.sql).change(db, tenant, change, by, new Date());
    return { after, counts: after ? await new TenantCapCounters(db).counts(tenant) : undefined };
  });
  if (out.json) out.jsonLine(after ? { ...after, counted: counts } : { tenantId: tenant });
  else {
    out.line(`${out.style('green', '✔')} tenant ${tenant}: ${describe(after)}`);
    if (after && counts)
      out.note(
        `counted so far: ${counts.day} tokens and ${units(counts.dayCost)} today, ${counts.month} tokens and ${units(counts.monthCost)} this month (UTC; a period not counted yet starts from the recorded usage)`,
      );
  }
  return after;
}

/** Every tenant's caps, with what is counted against them today and this month. */
export async function listCaps({ config, out }: CommandContext, tenant: string | undefined): Promise<void> {
  if (tenant !== undefined) assertToken('tenant', tenant);
  const rows = await withSchema(config, 'orchestrator', async (db) => {
    const all = await new TenantCapsRepository(db.sql).list();
    const chosen = tenant === undefined ? all : all.filter((r) => r.tenantId === tenant);
    const counters = new TenantCapCounters(db);
    return Promise.all(chosen.map(async (r) => ({ ...r, counted: await counters.counts(r.tenantId) })));
  });
  if (out.json) {
    for (const r of rows) out.jsonLine(r);
    return;
  }
  const cap = (limit: number | undefined, used: number) => (limit === undefined ? '-' : `${used}/${limit}`);
  const cost = (limit: number | undefined, used: number) =>
    limit === undefined ? '-' : `${units(used)}/${units(limit)}`;
  const lines = table([
    ['TENANT', 'DAY TOKENS', 'MONTH TOKENS', 'DAY COST', 'MONTH COST', 'SET', 'BY'],
    ...rows.map((r) => [
      r.tenantId,
      cap(r.dayTokens, r.counted.day),
      cap(r.monthTokens, r.counted.month),
      cost(r.dayCost, r.counted.dayCost),
      cost(r.monthCost, r.counted.monthCost),
      r.setAt,
      r.setBy,
    ]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(
    `${plural(rows.length, 'tenant')} with caps (used/cap; UTC day and month; cost in the price table's currency)`,
  );
}

function describe(after: TenantCapsRow | undefined): string {
  if (!after) return 'no caps';
  const parts = [
    after.dayTokens !== undefined && `${after.dayTokens} tokens a day`,
    after.monthTokens !== undefined && `${after.monthTokens} tokens a month`,
    after.dayCost !== undefined && `${units(after.dayCost)} a day`,
    after.monthCost !== undefined && `${units(after.monthCost)} a month`,
  ].filter((p): p is string => typeof p === 'string');
  return `${parts.join(', ')} (UTC)`;
}
