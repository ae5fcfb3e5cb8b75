import { Inject, Injectable } from '@nestjs/common';
import type { Msg } from 'nats';
import { tenantOpOfSubject, type SchedulesReply } from '@ratchet/contracts';
import { RequestResponder, ServiceRuntime } from '@ratchet/platform';
import { AgentCatalog } from '@ratchet/agents';
import { SchedulesApi, schedulesFailure, type Clock } from '@ratchet/jobs';

export const SCHEDULE_CLOCK = Symbol('SCHEDULE_CLOCK');
export const WEBHOOK_POLICY = Symbol('WEBHOOK_POLICY');

const fail = schedulesFailure;

/**
 * A tenant's schedules over NATS request/reply (`<prefix>.schedules.<tenant>.<op>`, see
 * `SchedulesRequest`); the tenant is the subject's, never the body's. Writes need the role that starts
 * runs: each tick's run acts as the schedule's creator. A bad schedule is refused whole, every problem
 * named; nothing is half-written.
 */
@Injectable()
export class SchedulesResponder extends RequestResponder {
  private readonly api: SchedulesApi;

  constructor(
    @Inject(ServiceRuntime) runtime: ServiceRuntime,
    @Inject(AgentCatalog) agents: AgentCatalog,
    @Inject(SCHEDULE_CLOCK) clock: Clock,
    @Inject(WEBHOOK_POLICY) webhooks: { allowPrivate: boolean },
  ) {
    super(runtime, 'orchestrator-schedules');
    this.api = new SchedulesApi(runtime, agents, clock, webhooks);
  }

  protected subject(): string {
    return this.runtime.subjects.schedulesAll;
  }

  protected async reply(msg: Msg): Promise<SchedulesReply> {
    const scope = tenantOpOfSubject(this.runtime.subjects.prefix, 'schedules', msg.subject);
    let reply: SchedulesReply;
    try {
      reply = scope
        ? await this.answer(scope.tenant, msg.data)
        : fail('invalid', `not a schedules subject: ${msg.subject}`);
    } catch (error) {
      this.runtime.logger.warn({ err: error }, 'schedules request failed');
      reply = fail('unavailable', 'the schedules store did not answer; retry');
    }
    return reply;
  }

  answer(tenantId: string, data: Uint8Array): Promise<SchedulesReply> {
    return this.api.answer(tenantId, data);
  }
}
