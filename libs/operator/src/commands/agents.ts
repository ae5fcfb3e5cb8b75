import { AgentDefinitionsRepository, type StoredAgent } from '@ratchet/adapters';
import { assertToken, plural, withSchema, type CommandContext } from '../context';
import { CliError } from '../errors';
import { table } from '../format';

/** A tenant's agents (its own and the shared ones), or the deployment's shared agents. */
export async function listAgents({ config, out }: CommandContext, tenant: string | undefined): Promise<StoredAgent[]> {
  if (tenant !== undefined) assertToken('tenant', tenant);
  const agents = await withSchema(config, 'orchestrator', (db) => {
    const repo = new AgentDefinitionsRepository(db.sql);
    return tenant === undefined ? repo.listShared() : repo.list(tenant);
  });
  if (out.json) {
    for (const a of agents) out.jsonLine({ name: a.name, version: a.version, scope: a.scope, digest: a.digest });
    return agents;
  }
  const lines = table([
    ['NAME', 'VERSION', 'SCOPE', 'TOOLS'],
    ...agents.map((a) => [a.name, String(a.version), a.scope, a.definition.tools.map((t) => t.name).join(',')]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(
    `${plural(agents.length, 'agent')} ${tenant === undefined ? 'shared by the deployment' : `for tenant ${tenant}`}`,
  );
  return agents;
}

/** Hands a shared agent (every version) to one tenant: after the upgrade that made every agent shared. */
export async function assignAgent({ config, out }: CommandContext, name: string, tenant: string): Promise<number> {
  assertToken('tenant', tenant);
  const result = await withSchema(config, 'orchestrator', (db) =>
    new AgentDefinitionsRepository(db.sql).assignShared(name, tenant),
  );
  if ('refused' in result) {
    const why = {
      not_shared: `no shared agent ${name}`,
      tenant_owns_name: `tenant ${tenant} already has an agent ${name} of its own`,
      in_use: `runs in flight of ${result.tenants?.join(', ')} use the shared agent ${name}: let them end first`,
    }[result.refused];
    throw new CliError(why, undefined, `agent.${result.refused}`);
  }
  if (out.json) out.jsonLine({ name, tenant, versions: result.moved });
  else
    out.line(`${out.style('green', '✔')} ${plural(result.moved, 'version')} of ${name} now belong to tenant ${tenant}`);
  return result.moved;
}
