import { ScheduleView, SubjectToken, type SchedulesRequest } from '@ratchet/contracts';
import { z } from 'zod';
import type { Backends } from '../backends/backends';
import { okWith, principalOf, type EdgePrincipal } from '../route-helpers';
import { parseRequest } from '../problem-details';

export const ScheduleIdParam = z.object({ id: SubjectToken });
export const ScheduleList = z.object({ schedules: z.array(ScheduleView) }).describe('ScheduleList');
export const ScheduleReply = z.object({ schedule: ScheduleView }).describe('ScheduleReply');
export const ScheduleDeleted = z.object({ deleted: z.string() }).describe('ScheduleDeleted');

/**
 * A tenant's schedules (`/v1/schedules`, docs/schedules.md), relayed to the orchestrator
 * (`<prefix>.schedules.<tenant>.<op>`; the tenant is the credential's). Another tenant's schedules answer
 * 404, as if they did not exist.
 */
export class SchedulesRoutes {
  constructor(private readonly backends: Pick<Backends, 'schedules'>) {}

  async list(principal: EdgePrincipal) {
    return {
      schedules: (await this.call(principal, { op: 'list', principal: principalOf(principal) }, 'schedules')).schedules,
    };
  }

  async create(principal: EdgePrincipal, body: unknown) {
    const reply = await this.call(
      principal,
      { op: 'create', principal: principalOf(principal), schedule: body },
      'schedule',
    );
    return { schedule: reply.schedule };
  }

  async get(principal: EdgePrincipal, rawParams: unknown) {
    const { id } = parseRequest(ScheduleIdParam, rawParams, { in: 'path' });
    return {
      schedule: (await this.call(principal, { op: 'get', principal: principalOf(principal), id }, 'schedule')).schedule,
    };
  }

  async update(principal: EdgePrincipal, rawParams: unknown, body: unknown) {
    const { id } = parseRequest(ScheduleIdParam, rawParams, { in: 'path' });
    const reply = await this.call(
      principal,
      { op: 'update', principal: principalOf(principal), id, patch: body },
      'schedule',
    );
    return { schedule: reply.schedule };
  }

  async remove(principal: EdgePrincipal, rawParams: unknown) {
    const { id } = parseRequest(ScheduleIdParam, rawParams, { in: 'path' });
    return {
      deleted: (await this.call(principal, { op: 'delete', principal: principalOf(principal), id }, 'deleted')).deleted,
    };
  }

  private async call<K extends 'schedules' | 'schedule' | 'deleted'>(
    principal: EdgePrincipal,
    request: SchedulesRequest,
    key: K,
  ) {
    return okWith(await this.backends.schedules(principal.tenantId, request), key, 'schedules', 'schedule');
  }
}
