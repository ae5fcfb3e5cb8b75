import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  AgentGetQuery,
  AgentList,
  AgentNameParam,
  AgentReply,
  AgentsRoutes,
  ApiJsonResponse,
  ApiPathParams,
  ApiProblems,
  ApiQueryParams,
} from '@ratchet/http-edge';
import type { ServerResponse } from 'node:http';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { OperatorOnly, READ_ROLES, RequireAnyRole, RequireRoles } from '../auth/roles.decorator';
import { Idempotent } from '../http/idempotent';

/**
 * A tenant's agent definitions, relayed to the orchestrator (`<prefix>.agents.<tenant>.<op>`; the
 * tenant is the credential's). The tenant sees its own agents and the deployment's shared ones
 * (`scope`); its admin registers its own. Another tenant's agents answer 404, as if they did not exist.
 */
@ApiTags('agents')
@Controller('v1/agents')
export class AgentsController {
  constructor(private readonly routes: AgentsRoutes) {}

  @Get()
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: "List the tenant's agents and the shared ones (latest versions)" })
  @ApiJsonResponse(200, 'The definitions', 'AgentList', AgentList)
  list(@CurrentPrincipal() principal: AuthenticatedPrincipal) {
    return this.routes.list('tenant', principal);
  }

  @Get(':name')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: 'An agent definition: the latest version, or `version`' })
  @ApiPathParams(AgentNameParam)
  @ApiQueryParams(AgentGetQuery, { version: 'A version; omitted: the latest' })
  @ApiJsonResponse(200, 'The definition', 'AgentReply', AgentReply)
  @ApiProblems({ 404: "No such agent (version) for this tenant (another tenant's agents are not found)" })
  get(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown, @Query() rawQuery: unknown) {
    return this.routes.get(principal, rawParams, rawQuery);
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
  @Idempotent({ conflict: 'The name is a shared agent' })
  @ApiProblems({ 400: 'Invalid definition (every problem listed)' })
  register(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Body() definition: unknown,
    @Res({ passthrough: true }) res: ServerResponse,
  ) {
    return this.routes.register('tenant', principal, definition, res);
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
  constructor(private readonly routes: AgentsRoutes) {}

  @Get()
  @OperatorOnly()
  @ApiOperation({ summary: 'List the shared agents (operator credential)' })
  @ApiJsonResponse(200, 'The shared definitions', 'AgentList', AgentList)
  list(@CurrentPrincipal() principal: AuthenticatedPrincipal) {
    return this.routes.list('deployment', principal);
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
  @Idempotent()
  @ApiProblems({ 400: 'Invalid definition (every problem listed)' })
  register(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Body() definition: unknown,
    @Res({ passthrough: true }) res: ServerResponse,
  ) {
    return this.routes.register('deployment', principal, definition, res);
  }
}
