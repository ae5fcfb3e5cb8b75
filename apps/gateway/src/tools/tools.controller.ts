import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CatalogToolView, ToolProblemView } from '@ratchet/contracts';
import { z } from 'zod';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { READ_ROLES, RequireAnyRole } from '../auth/roles.decorator';
import { Backends } from '../backends/backends';
import { backendProblem } from '@ratchet/http-edge';
import { ApiJsonResponse } from '@ratchet/http-edge';

const ToolList = z.object({ tools: z.array(CatalogToolView), problems: z.array(ToolProblemView) });

/**
 * The tools the tenant's runs may call, with the schema the model receives and where each comes from
 * (built-in, a tool module, a remote tool service, an MCP server), and the tools that are withheld
 * with the reason (`problems`). Another tenant's tools are never listed.
 */
@ApiTags('tools')
@Controller('v1/tools')
export class ToolsController {
  constructor(private readonly backends: Backends) {}

  @Get()
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: "The tenant's tool catalog" })
  @ApiJsonResponse(200, 'The tools and the withheld ones', 'ToolList', ToolList)
  async list(@CurrentPrincipal() principal: AuthenticatedPrincipal) {
    const reply = await this.backends.tools(principal.tenantId);
    if (!reply.ok) throw backendProblem(reply.error, 'tool catalog');
    return { tools: reply.tools, problems: reply.problems };
  }
}
