import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { IdempotencyKeysRepository } from '@ratchet/adapters';
import {
  IsoTime,
  requestDigest,
  RunId,
  RunStatus,
  RunSummary,
  RunView,
  subjects,
  ThreadId,
  type CancelRunMessage,
} from '@ratchet/contracts';
import { newId } from '@ratchet/platform';
import type { NatsConnection } from 'nats';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { READ_ROLES, RequireAnyRole, RequireRoles } from '../auth/roles.decorator';
import { Backends } from '../backends/backends';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG, IDEMPOTENCY_KEYS, NATS_CONNECTION } from '../gateway.tokens';
import { backendProblem } from '@ratchet/http-edge';
import { conflict, parseRequest } from '@ratchet/http-edge';
import { ApiJsonBody, ApiJsonResponse, ApiPathParams, ApiProblems, ApiQueryParams } from '@ratchet/http-edge';
import { RunRequestPublisher } from './run-request.publisher';
import { RunAdmissionCheck } from './run-admission';
import {
  CreateRunBody,
  IDEMPOTENCY_KEY_HEADER,
  IdempotencyKey,
  RunAcceptedSchema,
  idempotencyKeyOf,
  runAccepted,
  toRunRequest,
  type RunAccepted,
} from './run-request.mapping';

const RunIdParam = z.object({ runId: RunId });
const CancelBody = z.strictObject({ reason: z.string().max(1000).default('') }).describe('CancelRunBody');
const CancelAccepted = z.object({ runId: z.string(), threadId: z.string(), status: z.literal('cancelling') });
const OutcomeQuery = z.object({ waitSeconds: z.coerce.number().int().min(0).max(60).default(30) });
const RunOutcomeView = z
  .object({
    done: z.boolean().describe('false: the wait ended before the run did; ask again'),
    run: RunView,
  })
  .describe('RunOutcomeView');
type RunOutcomeView = z.infer<typeof RunOutcomeView>;

/** `key=value`: one metadata pair a run's request must hold. */
const MetadataPair = z
  .string()
  .max(1200)
  .regex(/^[^=]{1,128}=/, { error: 'each metadata filter is key=value' });
const SearchRunsQuery = z.object({
  status: RunStatus.optional(),
  agent: z.string().min(1).max(128).optional(),
  threadId: ThreadId.optional(),
  since: IsoTime.optional(),
  until: IsoTime.optional(),
  metadata: z.union([MetadataPair, z.array(MetadataPair).max(8)]).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(512).optional(),
});
const RunList = z
  .object({
    runs: z.array(RunSummary),
    nextCursor: z.string().optional().describe('Pass as `cursor` for the next page; absent on the last page'),
  })
  .describe('RunList');

const POLL_MS = 2_000;

@ApiTags('runs')
@Controller('v1/runs')
export class RunsController {
  private readonly subjects;
  private readonly webhooks: { allowPrivate: boolean };

  constructor(
    private readonly runRequests: RunRequestPublisher,
    private readonly backends: Backends,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Inject(IDEMPOTENCY_KEYS) private readonly idempotencyKeys: IdempotencyKeysRepository,
    private readonly admission: RunAdmissionCheck,
  ) {
    this.subjects = subjects(config.RATCHET_SUBJECT_PREFIX);
    this.webhooks = { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE };
  }

  /**
   * Starts a run: 202 once the request is durably on the bus; the orchestrator does the rest. The
   * same Idempotency-Key always answers the same runId/threadId and starts at most one run.
   */
  @Post()
  @HttpCode(202)
  @RequireRoles('runner')
  @ApiOperation({
    summary: 'Start a run',
    description:
      'On a new thread, or on `threadId` (a name within your tenant). The same Idempotency-Key always answers the same run and starts at most one.',
  })
  @ApiHeader({ name: IDEMPOTENCY_KEY_HEADER, required: false, description: 'Send one; retries with it are safe' })
  @ApiJsonBody('CreateRunBody', CreateRunBody)
  @ApiJsonResponse(202, 'Accepted: the run request is durably on the bus', 'RunAccepted', RunAcceptedSchema)
  @ApiProblems({
    409: 'The Idempotency-Key was already used for a different request (another thread, agent, input or metadata)',
    429: 'The tenant has as many runs queued or running as the deployment allows one tenant (`code`: `tenant.runs_limit`); retry after `Retry-After`',
  })
  async create(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Body() rawBody: unknown,
    @Headers() headers: Record<string, string | undefined>,
  ): Promise<RunAccepted> {
    const body = parseRequest(CreateRunBody, rawBody, { in: 'body' });
    const request = toRunRequest(body, principal, idempotencyKeyOf(headers), this.webhooks);
    const accepted = runAccepted(principal.tenantId, request);
    // At the tenant's bound on runs in flight: 429 now, before a key is taken or anything is on the bus.
    await this.admission.assertRoom(principal.tenantId, request.requestId);
    if (headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()] !== undefined) {
      // A key names one request for ever: the same one again gets the same run, another one a 409.
      const taken = await this.idempotencyKeys.take({
        tenantId: principal.tenantId,
        key: request.requestId,
        requestDigest: requestDigest(principal.tenantId, request),
        runId: accepted.runId,
        threadId: accepted.threadId,
      });
      if (taken.use === 'conflict')
        throw conflict(
          `The Idempotency-Key ${request.requestId} was already used for another request (run ${taken.record.runId} on thread ${taken.record.threadId}); send a new key for a new run.`,
          { code: 'request.conflict', runId: taken.record.runId, threadId: taken.record.threadId },
        );
    }
    await this.runRequests.publish(principal.tenantId, request, {
      traceparent: headers['traceparent'],
      tracestate: headers['tracestate'],
    });
    return accepted;
  }

  @Get()
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({
    summary: "Search the tenant's runs, newest start first",
    description:
      'Filters combine (all must hold). Runs not started yet (queued) come first and have no start time, so `since`/`until` leave them out. Pages follow `nextCursor`.',
  })
  @ApiQueryParams(SearchRunsQuery, {
    agent: 'Runs of this agent',
    threadId: 'Runs of this thread',
    since: 'Started at or after this time (RFC 3339)',
    until: 'Started before this time (RFC 3339)',
    metadata: '`key=value` the run request’s metadata holds; repeat for several (all must hold)',
    limit: 'At most this many',
    cursor: 'nextCursor of the previous page',
  })
  @ApiJsonResponse(200, 'A page of runs', 'RunList', RunList)
  async search(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Query() rawQuery: unknown) {
    const { metadata, ...query } = parseRequest(SearchRunsQuery, rawQuery, { in: 'query' });
    const pairs = metadata === undefined ? [] : Array.isArray(metadata) ? metadata : [metadata];
    const reply = await this.backends.threads(principal.tenantId, 'runs', {
      ...query,
      ...(pairs.length
        ? { metadata: Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)])) }
        : {}),
    });
    if (!reply.ok) throw backendProblem(reply.error, 'run');
    return { runs: reply.runs, ...(reply.nextCursor ? { nextCursor: reply.nextCursor } : {}) };
  }

  @Get(':runId')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: 'A run: status, steps and, once it ended, its outcome' })
  @ApiPathParams(RunIdParam)
  @ApiJsonResponse(200, 'The run', 'RunView', RunView)
  @ApiProblems({ 404: 'No such run in your tenant (or its request was not processed yet)' })
  async get(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown) {
    const { runId } = parseRequest(RunIdParam, rawParams, { in: 'path' });
    return this.lookup(principal.tenantId, runId);
  }

  @Post(':runId/cancel')
  @HttpCode(202)
  @RequireRoles('runner')
  @ApiOperation({
    summary: 'Cancel a run',
    description:
      'Publishes `run.cancel` to the thread inbox; the run ends with `run.cancelled` (open tool calls are closed with explicit results). 409 when the run already ended.',
  })
  @ApiPathParams(RunIdParam)
  @ApiHeader({ name: IDEMPOTENCY_KEY_HEADER, required: false })
  @ApiJsonBody('CancelRunBody', CancelBody)
  @ApiJsonResponse(202, 'The cancel is on the thread inbox', 'CancelAccepted', CancelAccepted)
  @ApiProblems({ 404: 'No such run in your tenant', 409: 'The run already ended' })
  async cancel(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Body() rawBody: unknown,
    @Headers() headers: Record<string, string | undefined>,
  ) {
    const { runId } = parseRequest(RunIdParam, rawParams, { in: 'path' });
    const body = parseRequest(CancelBody, rawBody ?? {}, { in: 'body' });
    const rawKey = headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
    const key =
      rawKey === undefined
        ? newId('cancel')
        : parseRequest(IdempotencyKey, rawKey, { in: 'header', name: IDEMPOTENCY_KEY_HEADER });
    const run = await this.lookup(principal.tenantId, runId);
    if (run.outcome) throw conflict(`The run already ended (${run.outcome.status}).`, { runStatus: run.status });
    const message: CancelRunMessage = {
      kind: 'run.cancel',
      messageId: `${principal.tenantId}:cancel:${runId}:${key}`,
      tenantId: principal.tenantId,
      threadId: run.threadId,
      runId,
      by: principal.principalId,
      reason: body.reason,
    };
    await this.runRequests.publishCancel(message, {
      traceparent: headers['traceparent'],
      tracestate: headers['tracestate'],
    });
    return { runId, threadId: run.threadId, status: 'cancelling' as const };
  }

  @Get(':runId/outcome')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({
    summary: 'Wait for a run to end',
    description:
      'Answers 200 with `done: true` as soon as the run has ended, or 202 with `done: false` when `waitSeconds` pass first (ask again).',
  })
  @ApiPathParams(RunIdParam)
  @ApiQueryParams(OutcomeQuery, { waitSeconds: 'How long to wait for the run to end' })
  @ApiJsonResponse(200, 'The run ended', 'RunOutcomeView', RunOutcomeView)
  @ApiJsonResponse(202, 'Still running when the wait ended', 'RunOutcomeView', RunOutcomeView)
  @ApiProblems({ 404: 'No such run in your tenant' })
  async outcome(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Query() rawQuery: unknown,
    @Req() req: IncomingMessage,
    @Res({ passthrough: true }) res: ServerResponse,
  ): Promise<RunOutcomeView> {
    const { runId } = parseRequest(RunIdParam, rawParams, { in: 'path' });
    const { waitSeconds } = parseRequest(OutcomeQuery, rawQuery, { in: 'query' });
    const tenant = principal.tenantId;
    let run = await this.lookup(tenant, runId);
    if (!run.outcome && waitSeconds > 0) {
      // Woken by the thread's event feed; a slow poll covers a feed message this replica missed.
      let wake: (() => void) | undefined;
      const sub = this.nc.subscribe(this.subjects.events(tenant, run.threadId), { callback: () => wake?.() });
      const deadline = Date.now() + waitSeconds * 1000;
      let closed = false;
      const onClose = () => {
        closed = true;
        sub.unsubscribe();
        wake?.();
      };
      req.once('close', onClose);
      try {
        run = await this.lookup(tenant, runId);
        while (!run.outcome && !closed && Date.now() < deadline) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.max(0, Math.min(POLL_MS, deadline - Date.now())));
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
          if (!closed) run = await this.lookup(tenant, runId);
        }
      } finally {
        req.off('close', onClose);
        sub.unsubscribe();
      }
    }
    res.statusCode = run.outcome ? 200 : 202;
    return { done: run.outcome !== undefined, run };
  }

  private async lookup(tenant: string, runId: string): Promise<RunView> {
    const reply = await this.backends.threads(tenant, 'run', { runId });
    if (!reply.ok) throw backendProblem(reply.error, 'run');
    return reply.run;
  }
}
