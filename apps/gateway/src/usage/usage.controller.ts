import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiJsonResponse, ApiQueryParams, UsageRoutes, UsageSchemas } from '@ratchet/http-edge';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { READ_ROLES, RequireAnyRole } from '../auth/roles.decorator';

/** What the tenant's model calls spent (docs/flow-control.md, "Usage"), relayed to the orchestrator. */
@ApiTags('usage')
@Controller('v1/usage')
export class UsageController {
  constructor(private readonly routes: UsageRoutes) {}

  @Get()
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({
    summary: "What the tenant's model calls spent, by day, month, agent, model or run",
    description:
      'Tokens as the providers reported them, for every model answer the log recorded (`model.responded`) in the window, and the calls the log shows made without their answer used (`abortedCalls`: a worker that stopped mid-call, an answer that came too late; they may have been billed, their tokens are unknown). Days and months are UTC; figures outlive the threads they came from.',
  })
  @ApiQueryParams(UsageSchemas.UsageQuery, {
    from: 'Calls answered at or after this time (RFC 3339, or a day YYYY-MM-DD meaning its UTC midnight); default: the first of the current UTC month',
    to: 'Calls answered before this time (RFC 3339, or a day: its UTC midnight, so `to` is exclusive); default: now',
    by: 'Comma-separated, in this order: `day`, `month`, `agent`, `model`, `run` (none: only the total)',
    agent: 'Only calls of this agent',
    model: 'Only calls answered by this model',
    runId: 'Only calls of this run',
    limit: 'At most this many groups (`truncated` says there were more)',
  })
  @ApiJsonResponse(200, 'The figures', 'UsageReport', UsageSchemas.UsageReport)
  report(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Query() rawQuery: unknown) {
    return this.routes.report(principal, rawQuery);
  }
}
