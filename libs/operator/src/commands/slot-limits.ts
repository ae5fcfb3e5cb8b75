import {
  AgentDefinitionsRepository,
  TenantSlotLimitsRepository,
  type StoredAgent,
  type TenantSlotLimit,
} from '@ratchet/adapters';
import { assertToken, plural, safeUserName, withSchema, type CommandContext } from '../context';
import { CliError, UsageError } from '../errors';
import { table } from '../format';

/** The most a slot's max may be, as in an agent definition. */
const MAX_SLOT_MAX = 1_000_000;

export interface SlotLimitTarget {
  tenant: string;
  agent: string;
  slot: string;
}

/**
 * Gives one tenant its own max for a concurrency key of an agent (ADR 0045): a shared agent's or the
 * tenant's own. The agent must resolve for the tenant and declare the slot (the settings of a name the
 * tenant cannot run would never apply). Runs requested from then on hold the key with this max; runs
 * already requested keep theirs.
 */
export async function setSlotLimit(
  { config, out }: CommandContext,
  target: SlotLimitTarget,
  max: number,
): Promise<TenantSlotLimit> {
  assertToken('tenant', target.tenant);
  if (!Number.isInteger(max) || max < 1 || max > MAX_SLOT_MAX)
    throw new UsageError(`invalid max ${max}: expected a whole number from 1 to ${MAX_SLOT_MAX.toLocaleString('en')}`);
  const setBy = `cli:${process.env['USER'] ?? safeUserName()}`;
  const { declared, limit } = await withSchema(config, 'orchestrator', async (db) => {
    const agent = await new AgentDefinitionsRepository(db.sql).latest(target.tenant, target.agent);
    const declared = declaredMax(agent, target);
    const limits = new TenantSlotLimitsRepository(db.sql);
    await limits.set({ ...target, max, setBy }, new Date());
    const limit = (await limits.list(target.tenant)).find((l) => l.agent === target.agent && l.slot === target.slot);
    return { declared, limit: limit! };
  });
  if (out.json) out.jsonLine({ ...limit, declared });
  else {
    out.line(
      `${out.style('green', '✔')} tenant ${target.tenant}: at most ${max} runs of ${target.agent} in flight per ${target.slot} (the agent declares ${declared})`,
    );
    out.note('runs requested from now on hold the key with this max; runs requested before keep theirs');
  }
  return limit;
}

/** Removes a tenant's max for a slot: the agent's own applies again to runs requested from then on. */
export async function unsetSlotLimit({ config, out }: CommandContext, target: SlotLimitTarget): Promise<boolean> {
  assertToken('tenant', target.tenant);
  const removed = await withSchema(config, 'orchestrator', (db) =>
    new TenantSlotLimitsRepository(db.sql).unset(target.tenant, target.agent, target.slot),
  );
  if (out.json) out.jsonLine({ ...target, removed });
  else if (removed)
    out.line(
      `${out.style('green', '✔')} tenant ${target.tenant}: ${target.agent}'s own max applies again per ${target.slot}`,
    );
  else out.note(`tenant ${target.tenant} has no max of its own for ${target.agent}'s slot ${target.slot}`);
  return removed;
}

/**
 * The tenants' own maxes (all, or one tenant's), each beside the max the agent declares now. A setting
 * whose agent no longer resolves for the tenant, or no longer declares the slot, is listed as ignored.
 */
export async function listSlotLimits(
  { config, out }: CommandContext,
  tenant: string | undefined,
): Promise<Array<TenantSlotLimit & { declared: number | null }>> {
  if (tenant !== undefined) assertToken('tenant', tenant);
  const rows = await withSchema(config, 'orchestrator', async (db) => {
    const agents = new AgentDefinitionsRepository(db.sql);
    const limits = await new TenantSlotLimitsRepository(db.sql).list(tenant);
    const out: Array<TenantSlotLimit & { declared: number | null }> = [];
    for (const limit of limits) {
      const agent = await agents.latest(limit.tenant, limit.agent);
      const slot = agent?.definition.slots?.find((s) => s.name === limit.slot);
      out.push({ ...limit, declared: slot?.max ?? null });
    }
    return out;
  });
  if (out.json) {
    for (const r of rows) out.jsonLine(r);
    return rows;
  }
  const lines = table([
    ['TENANT', 'AGENT', 'SLOT', 'MAX', 'DECLARED', 'SET', 'BY'],
    ...rows.map((r) => [
      r.tenant,
      r.agent,
      r.slot,
      String(r.max),
      r.declared === null ? 'ignored: not declared' : String(r.declared),
      r.setAt,
      r.setBy,
    ]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(`${plural(rows.length, 'setting')}${tenant === undefined ? '' : ` for tenant ${tenant}`}`);
  return rows;
}

/** The max the agent declares for the slot; refused when the tenant cannot run the agent or it has no such slot. */
function declaredMax(agent: StoredAgent | undefined, target: SlotLimitTarget): number {
  if (!agent)
    throw new CliError(
      `tenant ${target.tenant} has no agent ${target.agent} (of its own or shared)`,
      undefined,
      'agent.unknown',
    );
  const slots = agent.definition.slots ?? [];
  const slot = slots.find((s) => s.name === target.slot);
  if (!slot)
    throw new CliError(
      slots.length === 0
        ? `agent ${target.agent} declares no concurrency keys (slots)`
        : `agent ${target.agent} has no slot ${target.slot}; it declares ${slots.map((s) => `${s.name} (${s.key}, max ${s.max})`).join(', ')}`,
      undefined,
      'agent.slot_unknown',
    );
  return slot.max;
}
