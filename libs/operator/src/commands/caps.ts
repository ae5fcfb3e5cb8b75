import { TenantCapCounters, TenantCapsRepository, type TenantCapsChange, type TenantCapsRow } from '@ratchet/adapters';
import { assertToken, plural, safeUserName, withSchema, type CommandContext } from '../context';
import { UsageError } from '../errors';
import { table } from '../format';

/** The most tokens a cap may be (per day or month). */
const MAX_CAP_TOKENS = 1_000_000_000_000;

/**
 * Sets (a number) or removes (null) a tenant's token caps, per UTC day and per UTC month
 * (docs/flow-control.md#token-caps), as an operator: only this (the operator's access to the deployment)
 * changes a cap, never the tenant's own credential. Model calls decided from then on (within
 * TENANT_CAPS_CACHE_MS on every orchestrator) are held to them.
 */
export async function changeCaps(
  { config, out }: CommandContext,
  tenant: string,
  change: TenantCapsChange,
): Promise<TenantCapsRow | undefined> {
  assertToken('tenant', tenant);
  if (change.dayTokens === undefined && change.monthTokens === undefined)
    throw new UsageError('name a cap: --day-tokens <n> or --month-tokens <n>');
  for (const [option, v] of [
    ['--day-tokens', change.dayTokens],
    ['--month-tokens', change.monthTokens],
  ] as const)
    if (typeof v === 'number' && (!Number.isInteger(v) || v < 1 || v > MAX_CAP_TOKENS))
      throw new UsageError(`invalid ${option} ${v}: expected a whole number of tokens from 1 to ${MAX_CAP_TOKENS}`);
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
        `counted so far: ${counts.day} tokens today, ${counts.month} this month (UTC; a period not counted yet starts from the recorded usage)`,
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
  const lines = table([
    ['TENANT', 'DAY (USED/CAP)', 'MONTH (USED/CAP)', 'SET', 'BY'],
    ...rows.map((r) => [
      r.tenantId,
      cap(r.dayTokens, r.counted.day),
      cap(r.monthTokens, r.counted.month),
      r.setAt,
      r.setBy,
    ]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(`${plural(rows.length, 'tenant')} with caps (tokens; UTC day and month)`);
}

function describe(after: TenantCapsRow | undefined): string {
  if (!after) return 'no token caps';
  const day = after.dayTokens === undefined ? 'no daily cap' : `${after.dayTokens} tokens a day`;
  const month = after.monthTokens === undefined ? 'no monthly cap' : `${after.monthTokens} tokens a month`;
  return `${day}, ${month} (UTC)`;
}
