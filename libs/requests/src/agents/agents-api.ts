import { AgentsRequest, OPERATOR_ROLE, type AgentsReply } from '@ratchet/contracts';
import { AgentDefinitionError, AgentNameTakenError, parseAgentDefinition, type StoredAgent } from '@ratchet/adapters';
import { TransientError } from '@ratchet/domain';
import type { Logger } from '@ratchet/platform';
import { UnknownToolsError, type AgentCatalog } from '@ratchet/agents';

/** Whose catalog a request is for: a tenant's (from its subject) or the deployment's shared agents. */
export type AgentsScope = { tenant: string } | 'deployment';

/**
 * Agent definitions as requests and replies (`AgentsRequest` → `AgentsReply`): a tenant's catalog — the
 * tenant is the caller's (the subject's, bound by NATS permissions), never the body's — or the
 * deployment's shared agents. A registered definition becomes a new version only when its content
 * changed; runs in flight keep the version they pinned. Another tenant's agents read as missing.
 */
export class AgentsApi {
  constructor(
    private readonly catalog: AgentCatalog,
    private readonly logger: Logger,
  ) {}

  async answer(scope: AgentsScope, data: Uint8Array): Promise<AgentsReply> {
    let raw: unknown;
    try {
      raw = JSON.parse(new TextDecoder().decode(data));
    } catch {
      return { ok: false, error: { code: 'invalid', message: 'the request is not JSON' } };
    }
    const parsed = AgentsRequest.safeParse(raw);
    if (!parsed.success) {
      return {
        ok: false,
        error: {
          code: 'invalid',
          message: 'invalid agents request',
          problems: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
        },
      };
    }
    const request = parsed.data;
    const tenant = scope === 'deployment' ? undefined : scope.tenant;
    try {
      switch (request.op) {
        case 'list':
          return {
            ok: true,
            agents: (tenant ? await this.catalog.list(tenant) : await this.catalog.listShared()).map(view),
          };
        case 'get': {
          const agent = tenant
            ? request.version
              ? await this.catalog.get(tenant, request.name, request.version)
              : await this.catalog.latest(tenant, request.name)
            : await this.catalog.getShared(request.name, request.version);
          return agent
            ? { ok: true, agent: view(agent) }
            : {
                ok: false,
                error: {
                  code: 'not_found',
                  message: `no agent ${request.name}${request.version ? ` v${request.version}` : ''}`,
                },
              };
        }
        case 'register': {
          // A tenant's admin changes its tenant's agents; only an operator changes what every tenant runs.
          const role = tenant ? 'admin' : OPERATOR_ROLE;
          if (!request.principal.roles.includes(role))
            return {
              ok: false,
              error: {
                code: 'forbidden',
                message: tenant
                  ? 'registering agents needs the admin role'
                  : 'changing shared agents needs a deployment operator credential',
              },
            };
          const definition = parseAgentDefinition('request body', request.definition);
          const before = tenant
            ? await this.catalog.latest(tenant, definition.name)
            : await this.catalog.getShared(definition.name);
          const stored = await this.catalog.register(tenant, definition, 'request body');
          const created = before?.scope !== stored.scope || before.version !== stored.version;
          return { ok: true, agent: view(stored), created };
        }
      }
    } catch (error) {
      if (error instanceof AgentDefinitionError)
        return { ok: false, error: { code: 'invalid', message: 'invalid agent definition', problems: error.problems } };
      if (error instanceof UnknownToolsError) return { ok: false, error: { code: 'invalid', message: error.message } };
      if (error instanceof AgentNameTakenError)
        return { ok: false, error: { code: 'conflict', message: error.message } };
      if (!(error instanceof TransientError)) this.logger.error({ err: error }, 'agents request failed');
      return { ok: false, error: { code: 'unavailable', message: 'agent definitions are unavailable right now' } };
    }
  }
}

function view(agent: StoredAgent) {
  return {
    name: agent.name,
    version: agent.version,
    digest: agent.digest,
    scope: agent.scope,
    definition: agent.definition,
  };
}
