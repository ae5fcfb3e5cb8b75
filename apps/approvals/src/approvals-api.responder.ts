import { Inject, Injectable } from '@nestjs/common';
import type { Msg } from 'nats';
import { ApprovalsRequest, approvalsSubjects, type ApprovalsReply } from '@ratchet/contracts';
import { RequestResponder, ServiceRuntime } from '@ratchet/platform';
import { ApprovalsService } from './approvals.service';
import { parseJsonRequest } from './json-request';

/**
 * Request/reply on `<prefix>.approvals.api` (queue group: any instance answers): list, get and decide
 * for the gateway, verify for the orchestrator. A failure of our own answers `unavailable`, never a guess.
 */
@Injectable()
export class ApprovalsApiResponder extends RequestResponder {
  constructor(
    @Inject(ApprovalsService) private readonly approvals: ApprovalsService,
    @Inject(ServiceRuntime) runtime: ServiceRuntime,
  ) {
    super(runtime, 'approvals-api');
  }

  protected subject(): string {
    return approvalsSubjects(this.runtime.subjects.prefix).api;
  }

  protected reply(msg: Msg): Promise<ApprovalsReply> {
    return this.answer(msg.data);
  }

  async answer(data: Uint8Array): Promise<ApprovalsReply> {
    const parsed = parseJsonRequest(ApprovalsRequest, data, 'invalid approvals request');
    if (!parsed.ok) return parsed;
    const request = parsed.value;
    try {
      switch (request.op) {
        case 'list':
          return await this.approvals.list(request);
        case 'get':
          return await this.approvals.get(request);
        case 'decide': {
          const reply = await this.approvals.decide(request);
          this.runtime.logger.info(
            {
              approvalId: request.approvalId,
              tenantId: request.tenantId,
              by: request.principal.id,
              decision: request.decision,
              outcome: reply.ok ? 'recorded' : reply.error.code,
            },
            'approval decision',
          );
          return reply;
        }
        case 'complete': {
          const reply = await this.approvals.complete(request);
          // Never the result or the error's text: who completed which waitpoint, and how it went.
          this.runtime.logger.info(
            {
              waitpointId: request.approvalId,
              tenantId: request.tenantId,
              by: request.principal.id,
              outcome: request.outcome,
              answer: reply.ok ? 'recorded' : (reply.error.refusal ?? reply.error.code),
            },
            'waitpoint completion',
          );
          return reply;
        }
        case 'verify':
          return await this.approvals.verify(request);
        default: {
          const unknown: never = request;
          return unknown;
        }
      }
    } catch (error) {
      this.runtime.logger.error({ err: error, op: request.op }, 'approvals request failed');
      return { ok: false, error: { code: 'unavailable', message: 'approvals are unavailable right now' } };
    }
  }
}
