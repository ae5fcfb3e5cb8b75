import {
  AgentDefinitionsRepository,
  TenantAgentSettingsRepository,
  type AgentSettingsChange,
  type TenantAgentSettings,
} from '@ratchet/adapters';
import { assertToken, plural, safeUserName, withSchema, type CommandContext } from '../context';
import { CliError, UsageError } from '../errors';
import { table } from '../format';

const MAX_QUEUE_TTL_SECONDS = 2_592_000;
const MAX_PRIORITY = 600;
const MAX_THROTTLE_LIMIT = 1_000_000;
const MAX_THROTTLE_PERIOD_SECONDS = 86_400;

/** A whole number from `min` to `max`, or a usage error naming the option. */
function inRange(option: string, v: number | null | undefined, min: number, max: number, unit: string): void {
  if (v !== undefined && v !== null && (!Number.isInteger(v) || v < min || v > max))
    throw new UsageError(`invalid ${option} ${v}: expected ${unit} from ${min} to ${max}`);
}

/**
 * Sets (a number) or removes (null) a tenant's settings for one agent's runs, in place of the agent's:
 * the queued TTL, the default priority and the throttle's limit and period (docs/flow-control.md). The agent must resolve for the tenant.
 * Runs requested from then on take them; runs requested before keep theirs.
 */
export async function changeAgentSettings(
  { config, out }: CommandContext,
  tenant: string,
  agent: string,
  change: AgentSettingsChange,
): Promise<TenantAgentSettings | undefined> {
  assertToken('tenant', tenant);
  if (Object.values(change).every((v) => v === undefined))
    throw new UsageError(
      'name a setting: --queue-ttl <seconds>, --priority <seconds>, --throttle-limit <n> or --throttle-period <seconds>',
    );
  inRange('--queue-ttl', change.queueTtlSeconds, 1, MAX_QUEUE_TTL_SECONDS, 'whole seconds');
  inRange('--priority', change.priority, -MAX_PRIORITY, MAX_PRIORITY, 'whole seconds');
  inRange('--throttle-limit', change.throttleLimit, 1, MAX_THROTTLE_LIMIT, 'a whole number');
  inRange('--throttle-period', change.throttlePeriodSeconds, 1, MAX_THROTTLE_PERIOD_SECONDS, 'whole seconds');
  const by = `cli:${process.env['USER'] ?? safeUserName()}`;
  const after = await withSchema(config, 'orchestrator', async (db) => {
    const removing = Object.values(change).every((v) => v === null);
    const definition = removing ? undefined : await new AgentDefinitionsRepository(db.sql).latest(tenant, agent);
    if (!removing && !definition)
      throw new CliError(`tenant ${tenant} has no agent ${agent} (of its own or shared)`, undefined, 'agent.unknown');
    const settings = new TenantAgentSettingsRepository(db.sql);
    // On an agent that declares no throttle, the tenant's is its own: it takes both a limit and a period.
    if (definition && !definition.definition.throttle) {
      const now = await settings.of(tenant, agent);
      const has = (next: number | null | undefined, was: number | undefined) =>
        next === undefined ? was !== undefined : next !== null;
      if (has(change.throttleLimit, now.throttleLimit) !== has(change.throttlePeriodSeconds, now.throttlePeriodSeconds))
        throw new UsageError(
          `agent ${agent} declares no throttle: give the tenant's both --throttle-limit and --throttle-period`,
        );
    }
    return settings.change(tenant, agent, change, by, new Date());
  });
  if (out.json) out.jsonLine(after ?? { tenant, agent });
  else {
    out.line(`${out.style('green', '✔')} tenant ${tenant}, agent ${agent}: ${describe(after)}`);
    out.note('runs requested from now on take these; runs requested before keep theirs');
  }
  return after;
}

/** Every tenant's settings for its agents, or one tenant's. */
export async function listAgentSettings(
  { config, out }: CommandContext,
  tenant: string | undefined,
): Promise<TenantAgentSettings[]> {
  if (tenant !== undefined) assertToken('tenant', tenant);
  const rows = await withSchema(config, 'orchestrator', (db) => new TenantAgentSettingsRepository(db.sql).list(tenant));
  if (out.json) {
    for (const r of rows) out.jsonLine(r);
    return rows;
  }
  const lines = table([
    ['TENANT', 'AGENT', 'QUEUE_TTL', 'PRIORITY', 'THROTTLE', 'SET', 'BY'],
    ...rows.map((r) => [
      r.tenant,
      r.agent,
      r.queueTtlSeconds === undefined ? "agent's" : `${r.queueTtlSeconds}s`,
      r.priority === undefined ? "agent's" : String(r.priority),
      throttleOf(r, "agent's"),
      r.setAt,
      r.setBy,
    ]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(`${plural(rows.length, 'setting')}${tenant === undefined ? '' : ` for tenant ${tenant}`}`);
  return rows;
}

function describe(after: TenantAgentSettings | undefined): string {
  const ttl = after?.queueTtlSeconds === undefined ? "the agent's queued TTL" : `queued TTL ${after.queueTtlSeconds} s`;
  const priority = after?.priority === undefined ? "the agent's priority" : `priority ${after.priority}`;
  return `${ttl}, ${priority}, ${throttleOf(after ?? {}, "the agent's throttle")}`;
}

/** A tenant's throttle in words: `10 starts/60s`, with the agent's part where it sets one of the two. */
function throttleOf(s: { throttleLimit?: number; throttlePeriodSeconds?: number }, agents: string): string {
  if (s.throttleLimit === undefined && s.throttlePeriodSeconds === undefined) return agents;
  const limit = s.throttleLimit === undefined ? "agent's" : String(s.throttleLimit);
  const period = s.throttlePeriodSeconds === undefined ? "agent's period" : `${s.throttlePeriodSeconds}s`;
  return `${limit} starts/${period}`;
}
