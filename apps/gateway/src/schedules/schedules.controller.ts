import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  ScheduleBody,
  SchedulePatch,
  ScheduleView,
  SubjectToken,
  type SchedulesReply,
  type SchedulesRequest,
} from '@ratchet/contracts';
import { z } from 'zod';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { READ_ROLES, RequireAnyRole, RequireRoles } from '../auth/roles.decorator';
import { Backends } from '../backends/backends';
import { backendProblem } from '@ratchet/http-edge';
import { parseRequest } from '@ratchet/http-edge';
import { ApiJsonBody, ApiJsonResponse, ApiPathParams, ApiProblems } from '@ratchet/http-edge';

const IdParam = z.object({ id: SubjectToken });
export const ScheduleList = z.object({ schedules: z.array(ScheduleView) }).describe('ScheduleList');
export const ScheduleReply = z.object({ schedule: ScheduleView }).describe('ScheduleReply');
const Deleted = z.object({ deleted: z.string() }).describe('ScheduleDeleted');

/**
 * A tenant's schedules (docs/schedules.md), relayed to the orchestrator
 * (`<prefix>.schedules.<tenant>.<op>`; the tenant is the credential's). Each tick's run acts as the
 * schedule's creator, so managing schedules needs the role that starts runs. Another tenant's schedules
 * answer 404, as if they did not exist.
 */
@ApiTags('schedules')
@Controller('v1/schedules')
export class SchedulesController {
  constructor(private readonly backends: Backends) {}

  @Get()
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: "List the tenant's schedules" })
  @ApiJsonResponse(200, 'The schedules', 'ScheduleList', ScheduleList)
  async list(@CurrentPrincipal() principal: AuthenticatedPrincipal) {
    return {
      schedules: ok(await this.call(principal, { op: 'list', principal: asPrincipal(principal) }), 'schedules')
        .schedules,
    };
  }

  @Post()
  @RequireRoles('runner')
  @ApiOperation({
    summary: 'Create a schedule',
    description:
      'A cron expression in a time zone, or an interval. Each tick starts exactly one run (its requestId is `schedule:<id>:<tick time>`), acting as the caller.',
  })
  @ApiJsonBody('ScheduleBody', ScheduleBody)
  @ApiJsonResponse(201, 'Created', 'ScheduleReply', ScheduleReply)
  @ApiProblems({
    400: 'Invalid schedule: an invalid cron expression, an unknown time zone, an unknown agent, a forbidden webhook address (every problem listed)',
    409: 'The tenant has a schedule with this id',
  })
  async create(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Body() body: unknown) {
    const reply = await this.call(principal, { op: 'create', principal: asPrincipal(principal), schedule: body });
    return { schedule: ok(reply, 'schedule').schedule };
  }

  @Get(':id')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: 'A schedule, with its latest ticks' })
  @ApiPathParams(IdParam)
  @ApiJsonResponse(200, 'The schedule', 'ScheduleReply', ScheduleReply)
  @ApiProblems({ 404: 'No such schedule for this tenant' })
  async get(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown) {
    const { id } = parseRequest(IdParam, rawParams, { in: 'path' });
    return {
      schedule: ok(await this.call(principal, { op: 'get', principal: asPrincipal(principal), id }), 'schedule')
        .schedule,
    };
  }

  @Patch(':id')
  @RequireRoles('runner')
  @ApiOperation({
    summary: 'Pause, resume or change a schedule',
    description:
      '`{"paused": true}` pauses; `{"paused": false}` resumes from now (ticks missed while paused are not caught up).',
  })
  @ApiPathParams(IdParam)
  @ApiJsonBody('SchedulePatch', SchedulePatch)
  @ApiJsonResponse(200, 'The schedule as changed', 'ScheduleReply', ScheduleReply)
  @ApiProblems({ 400: 'Invalid change', 404: 'No such schedule for this tenant' })
  async update(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Body() body: unknown,
  ) {
    const { id } = parseRequest(IdParam, rawParams, { in: 'path' });
    const reply = await this.call(principal, { op: 'update', principal: asPrincipal(principal), id, patch: body });
    return { schedule: ok(reply, 'schedule').schedule };
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRoles('runner')
  @ApiOperation({ summary: 'Delete a schedule (runs it started go on)' })
  @ApiPathParams(IdParam)
  @ApiJsonResponse(200, 'Deleted', 'ScheduleDeleted', Deleted)
  @ApiProblems({ 404: 'No such schedule for this tenant' })
  async remove(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown) {
    const { id } = parseRequest(IdParam, rawParams, { in: 'path' });
    return {
      deleted: ok(await this.call(principal, { op: 'delete', principal: asPrincipal(principal), id }), 'deleted')
        .deleted,
    };
  }

  private call(principal: AuthenticatedPrincipal, request: SchedulesRequest): Promise<SchedulesReply> {
    return this.backends.schedules(principal.tenantId, request);
  }
}

function asPrincipal(principal: AuthenticatedPrincipal) {
  return { id: principal.principalId, roles: [...principal.roles] };
}

type Ok<K extends string> = Extract<SchedulesReply, { ok: true } & Record<K, unknown>>;

function ok<K extends 'schedules' | 'schedule' | 'deleted'>(reply: SchedulesReply, key: K): Ok<K> {
  if (!reply.ok) throw backendProblem(reply.error, 'schedule');
  if (!(key in reply)) throw new Error(`schedules reply without ${key}`);
  return reply as Ok<K>;
}
