import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { StoredAgentView, type AgentsReply } from '@ratchet/contracts';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { OperatorOnly, READ_ROLES, RequireAnyRole, RequireRoles } from '../auth/roles.decorator';
import { Backends } from '../backends/backends';
import { backendProblem } from '@ratchet/http-edge';
import { parseRequest } from '@ratchet/http-edge';
import { ApiJsonResponse, ApiPathParams, ApiProblems, ApiQueryParams } from '@ratchet/http-edge';

const NameParam = z.object({ name: z.string().min(1).max(128) });
const GetQuery = z.object({ version: z.coerce.number().int().positive().optional() });
export const AgentList = z.object({ agents: z.array(StoredAgentView) });
export const AgentReply = z.object({ agent: StoredAgentView, created: z.boolean().optional() });

/**
 * A tenant's agent definitions, relayed to the orchestrator (`<prefix>.agents.<tenant>.<op>`; the
 * tenant is the credential's). The tenant sees its own agents and the deployment's shared ones
 * (`scope`); its admin registers its own. Another tenant's agents answer 404, as if they did not exist.
 */
@ApiTags('agents')
@Controller('v1/agents')
export class AgentsController {
  constructor(private readonly backends: Backends) {}

  @Get()
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: "List the tenant's agents and the shared ones (latest versions)" })
  @ApiJsonResponse(200, 'The definitions', 'AgentList', AgentList)
  async list(@CurrentPrincipal() principal: AuthenticatedPrincipal) {
    const reply = await this.backends.agents(
      { tenant: principal.tenantId },
      { op: 'list', principal: asPrincipal(principal) },
    );
    return { agents: ok(reply, 'agents').agents };
  }

  @Get(':name')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: 'An agent definition: the latest version, or `version`' })
  @ApiPathParams(NameParam)
  @ApiQueryParams(GetQuery, { version: 'A version; omitted: the latest' })
  @ApiJsonResponse(200, 'The definition', 'AgentReply', AgentReply)
  @ApiProblems({ 404: "No such agent (version) for this tenant (another tenant's agents are not found)" })
  async get(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Query() rawQuery: unknown,
  ) {
    const { name } = parseRequest(NameParam, rawParams, { in: 'path' });
    const { version } = parseRequest(GetQuery, rawQuery, { in: 'query' });
    const reply = await this.backends.agents(
      { tenant: principal.tenantId },
      { op: 'get', principal: asPrincipal(principal), name, ...(version === undefined ? {} : { version }) },
    );
    return { agent: ok(reply, 'agent').agent };
  }

  @Post()
  @RequireRoles('admin')
  @ApiOperation({
    summary: "Register one of the tenant's agent definitions",
    description:
      'A new version only when the content changed: 201 with `created: true`, else 200 with the latest version. ' +
      "Its tools must be in the tenant's catalog (GET /v1/tools). A name the deployment offers as a shared agent is refused (409).",
  })
  @ApiBody({ description: 'An agent definition (agents/*.yaml as JSON)', schema: { type: 'object' } })
  @ApiJsonResponse(201, 'A new version', 'AgentReply', AgentReply)
  @ApiJsonResponse(200, 'Unchanged: the latest version', 'AgentReply', AgentReply)
  @ApiProblems({ 400: 'Invalid definition (every problem listed)', 409: 'The name is a shared agent' })
  async register(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Body() definition: unknown,
    @Res({ passthrough: true }) res: ServerResponse,
  ) {
    const reply = ok(
      await this.backends.agents(
        { tenant: principal.tenantId },
        { op: 'register', principal: asPrincipal(principal), definition },
      ),
      'agent',
    );
    res.statusCode = reply.created ? 201 : 200;
    return { agent: reply.agent, created: reply.created ?? false };
  }
}

/**
 * The deployment's shared agents, offered to every tenant (`<prefix>.deployment.agents.<op>`). Only a
 * deployment operator credential (`ratchet keys create --operator`) reaches these routes; a tenant's
 * admin is refused (403), whatever its roles.
 */
@ApiTags('deployment')
@Controller('v1/deployment/agents')
export class DeploymentAgentsController {
  constructor(private readonly backends: Backends) {}

  @Get()
  @OperatorOnly()
  @ApiOperation({ summary: 'List the shared agents (operator credential)' })
  @ApiJsonResponse(200, 'The shared definitions', 'AgentList', AgentList)
  async list(@CurrentPrincipal() principal: AuthenticatedPrincipal) {
    const reply = await this.backends.agents('deployment', { op: 'list', principal: asPrincipal(principal) });
    return { agents: ok(reply, 'agents').agents };
  }

  @Post()
  @OperatorOnly()
  @ApiOperation({
    summary: 'Register a shared agent definition (operator credential)',
    description:
      'Offered to every tenant (a tenant that owns an agent of the same name keeps using its own). Its tools must be offered to every tenant.',
  })
  @ApiBody({ description: 'An agent definition (agents/*.yaml as JSON)', schema: { type: 'object' } })
  @ApiJsonResponse(201, 'A new version', 'AgentReply', AgentReply)
  @ApiJsonResponse(200, 'Unchanged: the latest version', 'AgentReply', AgentReply)
  @ApiProblems({ 400: 'Invalid definition (every problem listed)' })
  async register(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Body() definition: unknown,
    @Res({ passthrough: true }) res: ServerResponse,
  ) {
    const reply = ok(
      await this.backends.agents('deployment', { op: 'register', principal: asPrincipal(principal), definition }),
      'agent',
    );
    res.statusCode = reply.created ? 201 : 200;
    return { agent: reply.agent, created: reply.created ?? false };
  }
}

function asPrincipal(principal: AuthenticatedPrincipal) {
  return { id: principal.principalId, roles: [...principal.roles] };
}

type Ok<K extends string> = Extract<AgentsReply, { ok: true } & Record<K, unknown>>;

function ok<K extends 'agents' | 'agent'>(reply: AgentsReply, key: K): Ok<K> {
  if (!reply.ok) throw backendProblem(reply.error, 'agent');
  if (!(key in reply)) throw new Error(`agents reply without ${key}`);
  return reply as Ok<K>;
}
