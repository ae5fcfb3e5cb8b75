import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ScheduleBody, SchedulePatch } from '@ratchet/contracts';
import {
  ApiJsonBody,
  ApiJsonResponse,
  ApiPathParams,
  ApiProblems,
  ScheduleDeleted,
  ScheduleIdParam,
  ScheduleList,
  ScheduleReply,
  SchedulesRoutes,
} from '@ratchet/http-edge';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { READ_ROLES, RequireAnyRole, RequireRoles } from '../auth/roles.decorator';
import { Idempotent } from '../http/idempotent';

/**
 * A tenant's schedules (docs/schedules.md), relayed to the orchestrator
 * (`<prefix>.schedules.<tenant>.<op>`; the tenant is the credential's). Each tick's run acts as the
 * schedule's creator, so managing schedules needs the role that starts runs. Another tenant's schedules
 * answer 404, as if they did not exist.
 */
@ApiTags('schedules')
@Controller('v1/schedules')
export class SchedulesController {
  constructor(private readonly routes: SchedulesRoutes) {}

  @Get()
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: "List the tenant's schedules" })
  @ApiJsonResponse(200, 'The schedules', 'ScheduleList', ScheduleList)
  list(@CurrentPrincipal() principal: AuthenticatedPrincipal) {
    return this.routes.list(principal);
  }

  @Post()
  @RequireRoles('runner')
  @ApiOperation({
    summary: 'Create a schedule',
    description:
      'A cron expression in a time zone, or an interval. Each tick starts exactly one run (its requestId is `schedule:<id>:<tick time>`), acting as the caller.',
  })
  @Idempotent({ conflict: 'The tenant has a schedule with this id' })
  @ApiJsonBody('ScheduleBody', ScheduleBody)
  @ApiJsonResponse(201, 'Created', 'ScheduleReply', ScheduleReply)
  @ApiProblems({
    400: 'Invalid schedule: an invalid cron expression, an unknown time zone, an unknown agent, a forbidden webhook address (every problem listed)',
  })
  create(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Body() body: unknown) {
    return this.routes.create(principal, body);
  }

  @Get(':id')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: 'A schedule, with its latest ticks' })
  @ApiPathParams(ScheduleIdParam)
  @ApiJsonResponse(200, 'The schedule', 'ScheduleReply', ScheduleReply)
  @ApiProblems({ 404: 'No such schedule for this tenant' })
  get(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown) {
    return this.routes.get(principal, rawParams);
  }

  @Patch(':id')
  @RequireRoles('runner')
  @ApiOperation({
    summary: 'Pause, resume or change a schedule',
    description:
      '`{"paused": true}` pauses; `{"paused": false}` resumes from now (ticks missed while paused are not caught up).',
  })
  @ApiPathParams(ScheduleIdParam)
  @Idempotent()
  @ApiJsonBody('SchedulePatch', SchedulePatch)
  @ApiJsonResponse(200, 'The schedule as changed', 'ScheduleReply', ScheduleReply)
  @ApiProblems({ 400: 'Invalid change', 404: 'No such schedule for this tenant' })
  update(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown, @Body() body: unknown) {
    return this.routes.update(principal, rawParams, body);
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRoles('runner')
  @ApiOperation({ summary: 'Delete a schedule (runs it started go on)' })
  @ApiPathParams(ScheduleIdParam)
  @ApiJsonResponse(200, 'Deleted', 'ScheduleDeleted', ScheduleDeleted)
  @ApiProblems({ 404: 'No such schedule for this tenant' })
  remove(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown) {
    return this.routes.remove(principal, rawParams);
  }
}
