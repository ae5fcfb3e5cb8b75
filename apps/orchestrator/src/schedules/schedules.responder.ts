import { Inject, Injectable } from '@nestjs/common';
import type { SchedulesReply } from '@ratchet/contracts';
import { ServiceRuntime, TenantRequestResponder } from '@ratchet/platform';
import { AgentCatalog } from '@ratchet/agents';
import { SchedulesApi, type Clock } from '@ratchet/jobs';

export const SCHEDULE_CLOCK = Symbol('SCHEDULE_CLOCK');
export const WEBHOOK_POLICY = Symbol('WEBHOOK_POLICY');

/**
 * A tenant's schedules over NATS request/reply (`<prefix>.schedules.<tenant>.<op>`, see
 * `SchedulesRequest`); the tenant is the subject's, never the body's. Writes need the role that starts
 * runs: each tick's run acts as the schedule's creator. A bad schedule is refused whole, every problem
 * named; nothing is half-written.
 */
@Injectable()
export class SchedulesResponder extends TenantRequestResponder {
  private readonly api: SchedulesApi;

  constructor(
    @Inject(ServiceRuntime) runtime: ServiceRuntime,
    @Inject(AgentCatalog) agents: AgentCatalog,
    @Inject(SCHEDULE_CLOCK) clock: Clock,
    @Inject(WEBHOOK_POLICY) webhooks: { allowPrivate: boolean },
  ) {
    super(runtime, 'orchestrator-schedules', 'schedules');
    this.api = new SchedulesApi(runtime, agents, clock, webhooks);
  }

  protected subject(): string {
    return this.runtime.subjects.schedulesAll;
  }

  answer(tenantId: string, data: Uint8Array): Promise<SchedulesReply> {
    return this.api.answer(tenantId, data);
  }
}
