import { Inject, Injectable } from '@nestjs/common';
import { WaitpointCompletionRequest, type ApprovalsReply } from '@ratchet/contracts';
import { ServiceRuntime, TenantRequestResponder } from '@ratchet/platform';
import { ApprovalsService, WAITPOINT_ROLE } from './approvals.service';
import { parseJsonRequest } from './json-request';

/**
 * `<prefix>.waitpoints.<tenant>.complete` (request/reply, queue group: any instance answers): another
 * service of the tenant completes a waitpoint, as `POST /v1/waitpoints/{id}/complete` does. The tenant
 * is the subject's, never the body's: NATS permissions decide who may publish for which tenant. The
 * sender is recorded as `nats:<by>`.
 */
@Injectable()
export class WaitpointCompletionsResponder extends TenantRequestResponder {
  constructor(
    @Inject(ApprovalsService) private readonly approvals: ApprovalsService,
    @Inject(ServiceRuntime) runtime: ServiceRuntime,
  ) {
    super(runtime, 'approvals-waitpoints', 'waitpoints');
  }

  protected subject(): string {
    return this.runtime.subjects.waitpointsAll;
  }

  async answer(tenantId: string, data: Uint8Array): Promise<ApprovalsReply> {
    const parsed = parseJsonRequest(WaitpointCompletionRequest, data, 'invalid waitpoint completion');
    if (!parsed.ok) return parsed;
    const request = parsed.value;
    const reply = await this.approvals.complete({
      op: 'complete',
      tenantId,
      principal: { id: `nats:${request.by}`, roles: [WAITPOINT_ROLE] },
      approvalId: request.waitpointId,
      ...(request.error !== undefined
        ? { outcome: 'failed' as const, error: request.error }
        : { outcome: 'completed' as const, result: request.result }),
    });
    this.runtime.logger.info(
      {
        waitpointId: request.waitpointId,
        tenantId,
        by: `nats:${request.by}`,
        answer: reply.ok ? 'recorded' : (reply.error.refusal ?? reply.error.code),
      },
      'waitpoint completion (NATS)',
    );
    return reply;
  }
}
