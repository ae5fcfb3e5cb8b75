import { StoredAgentView, type AgentsReply } from '@ratchet/contracts';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Backends } from '../backends/backends';
import { okWith, principalOf, replyWith, type EdgePrincipal } from '../route-helpers';
import { parseRequest } from '../problem-details';

export const AgentNameParam = z.object({ name: z.string().min(1).max(128) });
export const AgentGetQuery = z.object({ version: z.coerce.number().int().positive().optional() });
export const AgentList = z.object({ agents: z.array(StoredAgentView) });
export const AgentReply = z.object({ agent: StoredAgentView, created: z.boolean().optional() });

/**
 * Agent definitions, relayed to the orchestrator: a tenant's (`<prefix>.agents.<tenant>.<op>`; the tenant
 * is the credential's, which sees its own agents and the deployment's shared ones) or, for `'deployment'`,
 * the shared ones (`<prefix>.deployment.agents.<op>`). Another tenant's agents answer 404.
 */
export class AgentsRoutes {
  constructor(private readonly backends: Pick<Backends, 'agents'>) {}

  async list(scope: 'tenant' | 'deployment', principal: EdgePrincipal) {
    const reply = await this.backends.agents(scopeOf(scope, principal), {
      op: 'list',
      principal: principalOf(principal),
    });
    return { agents: ok(reply, 'agents').agents };
  }

  async get(principal: EdgePrincipal, rawParams: unknown, rawQuery: unknown) {
    const { name } = parseRequest(AgentNameParam, rawParams, { in: 'path' });
    const { version } = parseRequest(AgentGetQuery, rawQuery, { in: 'query' });
    const reply = await this.backends.agents(
      { tenant: principal.tenantId },
      { op: 'get', principal: principalOf(principal), name, ...(version === undefined ? {} : { version }) },
    );
    return { agent: ok(reply, 'agent').agent };
  }

  /** A new version only when the content changed: 201 with `created: true`, else 200 with the latest version. */
  async register(scope: 'tenant' | 'deployment', principal: EdgePrincipal, definition: unknown, res: ServerResponse) {
    const reply = ok(
      await this.backends.agents(scopeOf(scope, principal), {
        op: 'register',
        principal: principalOf(principal),
        definition,
      }),
      'agent',
    );
    return replyWith(res, reply.created ? 201 : 200, { agent: reply.agent, created: reply.created ?? false });
  }
}

function scopeOf(scope: 'tenant' | 'deployment', principal: EdgePrincipal): { tenant: string } | 'deployment' {
  return scope === 'deployment' ? 'deployment' : { tenant: principal.tenantId };
}

function ok<K extends 'agents' | 'agent'>(reply: AgentsReply, key: K) {
  return okWith(reply, key, 'agents', 'agent');
}
