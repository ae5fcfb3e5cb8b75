import {
  IsoTime,
  RunId,
  RunStatus,
  RunWaitingFilter,
  RunSummary,
  RunView,
  subjects,
  ThreadId,
  type CancelRunMessage,
  type Subjects,
} from '@ratchet/contracts';
import { newId } from '@ratchet/platform';
import type { NatsConnection } from 'nats';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { backendProblem } from '../backend-errors';
import type { Backends } from '../backends/backends';
import type { EdgePrincipal } from '../route-helpers';
import { replyWith } from '../route-helpers';
import { conflict, parseRequest } from '../problem-details';
import type { RunAdmissionCheck } from './run-admission';
import {
  CreateRunBody,
  IDEMPOTENCY_KEY_HEADER,
  IdempotencyKey,
  idempotencyKeyOf,
  runAccepted,
  toRunRequest,
  type RunAccepted,
} from './run-request-mapping';
import { traceOf, type RunRequestPublisher } from './run-request-publisher';

export const RunIdParam = z.object({ runId: RunId });
export const CancelBody = z.strictObject({ reason: z.string().max(1000).default('') }).describe('CancelRunBody');
export const CancelAccepted = z.object({ runId: z.string(), threadId: z.string(), status: z.literal('cancelling') });
export const OutcomeQuery = z.object({ waitSeconds: z.coerce.number().int().min(0).max(60).default(30) });
export const RunOutcomeView = z
  .object({
    done: z.boolean().describe('false: the wait ended before the run did; ask again'),
    run: RunView,
  })
  .describe('RunOutcomeView');
export type RunOutcomeView = z.infer<typeof RunOutcomeView>;

/** `key=value`: one metadata pair a run's request must hold. */
const MetadataPair = z
  .string()
  .max(1200)
  .regex(/^[^=]{1,128}=/, { error: 'each metadata filter is key=value' });
export const SearchRunsQuery = z.object({
  status: RunStatus.optional(),
  waiting: RunWaitingFilter.optional(),
  agent: z.string().min(1).max(128).optional(),
  threadId: ThreadId.optional(),
  since: IsoTime.optional(),
  until: IsoTime.optional(),
  metadata: z.union([MetadataPair, z.array(MetadataPair).max(8)]).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(512).optional(),
});
export const RunList = z
  .object({
    runs: z.array(RunSummary),
    nextCursor: z.string().optional().describe('Pass as `cursor` for the next page; absent on the last page'),
  })
  .describe('RunList');

/** The schemas the run routes declare for OpenAPI, as one object for the controller's decorators. */
export const RunSchemas = {
  RunIdParam,
  CancelBody,
  CancelAccepted,
  OutcomeQuery,
  RunOutcomeView,
  SearchRunsQuery,
  RunList,
} as const;

const POLL_MS = 2_000;

/** What starting a run goes through: the tenant's bound on runs in flight, then the bus. */
export interface RunStarts {
  readonly runRequests: RunRequestPublisher;
  readonly admission: RunAdmissionCheck;
  readonly webhooks: { allowPrivate: boolean };
}

/**
 * Starts a run from a parsed body (`POST /v1/runs`, `POST /v1/threads`): the RunRequest with the
 * Idempotency-Key as its requestId, 429 at the tenant's bound on runs in flight (before anything is on the
 * bus), then the request on the bus. The answer's ids are derived from (tenant, requestId), so a resend
 * gets the same ones.
 */
export async function startRun(
  starts: RunStarts,
  principal: EdgePrincipal,
  body: Parameters<typeof toRunRequest>[0],
  headers: Record<string, string | undefined>,
): Promise<RunAccepted> {
  const request = toRunRequest(body, principal, idempotencyKeyOf(headers), starts.webhooks);
  const accepted = runAccepted(principal.tenantId, request);
  await starts.admission.assertRoom(principal.tenantId, request.requestId);
  await starts.runRequests.publish(principal.tenantId, request, traceOf(headers));
  return accepted;
}

/** The runs API (`/v1/runs`): start, search, read, cancel and wait for runs of the caller's tenant. */
export class RunsRoutes {
  private readonly subjects: Subjects;

  constructor(
    private readonly starts: RunStarts,
    private readonly backends: Pick<Backends, 'threads'>,
    private readonly nc: NatsConnection,
    subjectPrefix: string,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.subjects = subjects(subjectPrefix);
  }

  /**
   * Starts a run: 202 once the request is durably on the bus; the orchestrator does the rest. The
   * same Idempotency-Key always answers the same runId/threadId and starts at most one run (the key is
   * the request id; the gateway answers a key used again before this runs, docs/api.md#idempotency-keys).
   */
  async create(
    principal: EdgePrincipal,
    rawBody: unknown,
    headers: Record<string, string | undefined>,
  ): Promise<RunAccepted> {
    const body = parseRequest(CreateRunBody, rawBody, { in: 'body' });
    return startRun(this.starts, principal, body, headers);
  }

  async search(principal: EdgePrincipal, rawQuery: unknown) {
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

  async get(principal: EdgePrincipal, rawParams: unknown): Promise<RunView> {
    const { runId } = parseRequest(RunIdParam, rawParams, { in: 'path' });
    return this.lookup(principal.tenantId, runId);
  }

  /** Publishes `run.cancel` to the run's thread inbox; 409 when the run already ended. */
  async cancel(
    principal: EdgePrincipal,
    rawParams: unknown,
    rawBody: unknown,
    headers: Record<string, string | undefined>,
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
    await this.starts.runRequests.publishCancel(message, traceOf(headers));
    return { runId, threadId: run.threadId, status: 'cancelling' as const };
  }

  /** 200 with `done: true` once the run has ended, or 202 with `done: false` when `waitSeconds` pass first. */
  async outcome(
    principal: EdgePrincipal,
    rawParams: unknown,
    rawQuery: unknown,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<RunOutcomeView> {
    const { runId } = parseRequest(RunIdParam, rawParams, { in: 'path' });
    const { waitSeconds } = parseRequest(OutcomeQuery, rawQuery, { in: 'query' });
    let run = await this.lookup(principal.tenantId, runId);
    if (!run.outcome && waitSeconds > 0)
      run = await this.follow(principal.tenantId, runId, run.threadId, waitSeconds, req);
    return replyWith(res, run.outcome ? 200 : 202, { done: run.outcome !== undefined, run });
  }

  /**
   * Waits for a run to end, woken by the thread's event feed; a slow poll covers a feed message this
   * replica missed. Ends early when the client goes away.
   */
  private async follow(
    tenant: string,
    runId: string,
    threadId: string,
    waitSeconds: number,
    req: IncomingMessage,
  ): Promise<RunView> {
    let wake: (() => void) | undefined;
    // Woken by the decision feed (v2): one message per committed decision, so one wake-up per decision.
    const sub = this.nc.subscribe(this.subjects.feed(tenant, threadId), { callback: () => wake?.() });
    const deadline = this.now() + waitSeconds * 1000;
    let closed = false;
    const onClose = () => {
      closed = true;
      sub.unsubscribe();
      wake?.();
    };
    req.once('close', onClose);
    try {
      let run = await this.lookup(tenant, runId);
      while (!run.outcome && !closed && this.now() < deadline) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, Math.min(POLL_MS, deadline - this.now())));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
        if (!closed) run = await this.lookup(tenant, runId);
      }
      return run;
    } finally {
      req.off('close', onClose);
      sub.unsubscribe();
    }
  }

  private async lookup(tenant: string, runId: string): Promise<RunView> {
    const reply = await this.backends.threads(tenant, 'run', { runId });
    if (!reply.ok) throw backendProblem(reply.error, 'run');
    return reply.run;
  }
}
