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

/**
 * Sets (a number) or removes (null) a tenant's settings for one agent's runs, in place of the agent's:
 * the queued TTL and the default priority (docs/flow-control.md). The agent must resolve for the tenant.
 * Runs requested from then on take them; runs requested before keep theirs.
 */
export async function changeAgentSettings(
  { config, out }: CommandContext,
  tenant: string,
  agent: string,
  change: AgentSettingsChange,
): Promise<TenantAgentSettings | undefined> {
  assertToken('tenant', tenant);
  if (change.queueTtlSeconds === undefined && change.priority === undefined)
    throw new UsageError('name a setting: --queue-ttl <seconds> or --priority <seconds>');
  const ttl = change.queueTtlSeconds;
  if (ttl !== undefined && ttl !== null && (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_QUEUE_TTL_SECONDS))
    throw new UsageError(`invalid --queue-ttl ${ttl}: expected whole seconds from 1 to ${MAX_QUEUE_TTL_SECONDS}`);
  const p = change.priority;
  if (p !== undefined && p !== null && (!Number.isInteger(p) || Math.abs(p) > MAX_PRIORITY))
    throw new UsageError(`invalid --priority ${p}: expected whole seconds from -${MAX_PRIORITY} to ${MAX_PRIORITY}`);
  const by = `cli:${process.env['USER'] ?? safeUserName()}`;
  const after = await withSchema(config, 'orchestrator', async (db) => {
    const removing = Object.values(change).every((v) => v === null);
    if (!removing && !(await new AgentDefinitionsRepository(db.sql).latest(tenant, agent)))
      throw new CliError(`tenant ${tenant} has no agent ${agent} (of its own or shared)`, undefined, 'agent.unknown');
    return new TenantAgentSettingsRepository(db.sql).change(tenant, agent, change, by, new Date());
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
    ['TENANT', 'AGENT', 'QUEUE_TTL', 'PRIORITY', 'SET', 'BY'],
    ...rows.map((r) => [
      r.tenant,
      r.agent,
      r.queueTtlSeconds === undefined ? "agent's" : `${r.queueTtlSeconds}s`,
      r.priority === undefined ? "agent's" : String(r.priority),
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
  return `${ttl}, ${priority}`;
}
