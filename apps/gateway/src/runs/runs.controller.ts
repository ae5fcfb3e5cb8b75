import { Body, Controller, Headers, HttpCode, Post } from '@nestjs/common';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { RequireRoles } from '../auth/roles.decorator';
import { parseRequest } from '../http/problem-details';
import { RunRequestPublisher } from './run-request.publisher';
import {
  CreateRunBody,
  IDEMPOTENCY_KEY_HEADER,
  IdempotencyKey,
  requestIdOf,
  runAccepted,
  toRunRequest,
  type RunAccepted,
} from './run-request.mapping';

@Controller('v1/runs')
export class RunsController {
  constructor(private readonly runRequests: RunRequestPublisher) {}

  /**
   * Starts a run: 202 once the request is durably on the bus; the orchestrator does the rest. The
   * same Idempotency-Key always answers the same runId/threadId and starts at most one run.
   */
  @Post()
  @HttpCode(202)
  @RequireRoles('runner')
  async create(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Body() rawBody: unknown,
    @Headers() headers: Record<string, string | undefined>,
  ): Promise<RunAccepted> {
    const body = parseRequest(CreateRunBody, rawBody, { in: 'body' });
    const rawKey = headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
    const key =
      rawKey === undefined
        ? undefined
        : parseRequest(IdempotencyKey, rawKey, { in: 'header', name: IDEMPOTENCY_KEY_HEADER });
    const request = toRunRequest(body, principal, requestIdOf(key));
    await this.runRequests.publish(principal.tenantId, request, {
      traceparent: headers['traceparent'],
      tracestate: headers['tracestate'],
    });
    return runAccepted(principal.tenantId, request);
  }
}
