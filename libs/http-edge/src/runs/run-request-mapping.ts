import { RunRequest } from '@ratchet/contracts';
import { newId, runIdFor, threadIdFor } from '@ratchet/platform';
import { z } from 'zod';
import type { EdgePrincipal } from '../route-helpers';
import { webhookUrlProblem } from '@ratchet/adapters';
import { InvalidRequestError, parseRequest } from '../problem-details';

/**
 * The body of `POST /v1/runs`. Field limits are RunRequest's own, so the HTTP API cannot accept what
 * the wire contract would refuse. Strict: an unknown field (a typo like `thread_id`, or a `tenantId`,
 * which only the credential decides) is a 400, not silently ignored.
 */
export const CreateRunBody = z.strictObject({
  agent: RunRequest.shape.agent,
  /** A plain string is shorthand for one user message. */
  input: z
    .union([
      z
        .string()
        .min(1)
        .max(100_000)
        .describe('Shorthand for one user message')
        .transform((content) => [{ role: 'user' as const, content }]),
      RunRequest.shape.input,
    ])
    .describe('The input: a string (one user message), or the user messages'),
  threadId: RunRequest.shape.threadId,
  metadata: RunRequest.shape.metadata,
  concurrency: RunRequest.shape.concurrency,
  priority: RunRequest.shape.priority,
  webhookUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional()
    .describe("The run's outcome is POSTed here when it ends, signed (docs/webhooks.md)"),
});
export type CreateRunBody = z.output<typeof CreateRunBody>;

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/**
 * `Idempotency-Key`: printable ASCII without spaces, at most 200 characters (it becomes the
 * requestId and part of `Nats-Msg-Id`). The IETF draft sends it as a quoted structured-field string
 * (`"abc"`); the bare form most clients use is accepted too.
 */
export const IdempotencyKey = z
  .string()
  .transform((v) => v.trim().replace(/^"(.*)"$/, '$1'))
  .pipe(
    z
      .string()
      .min(1, { error: 'must not be empty' })
      .max(200, { error: 'must be at most 200 characters' })
      .regex(/^[\x21-\x7e]+$/, { error: 'must be printable ASCII without spaces' }),
  );

/**
 * The requestId of a request: the client's Idempotency-Key, or a fresh id when it sent none. Without
 * a key a retried POST (say, after a timeout) starts a second run; clients should always send one.
 */
export function idempotencyKeyOf(headers: Record<string, string | undefined>): string {
  const raw = headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
  const key =
    raw === undefined ? undefined : parseRequest(IdempotencyKey, raw, { in: 'header', name: IDEMPOTENCY_KEY_HEADER });
  return requestIdOf(key);
}

export function requestIdOf(idempotencyKey: string | undefined, generate: () => string = () => newId('req')): string {
  return idempotencyKey ?? generate();
}

/**
 * The RunRequest the gateway publishes. The tenant is not in it: it travels in the subject, taken
 * from the credential. Parsed through the contract so a mapping bug fails here, not in the orchestrator.
 */
export function toRunRequest(
  body: Omit<CreateRunBody, 'threadId'> & { threadId?: string | undefined },
  principal: Pick<EdgePrincipal, 'principalId' | 'roles'>,
  requestId: string,
  webhooks: { allowPrivate: boolean } = { allowPrivate: false },
): RunRequest {
  if (body.webhookUrl !== undefined) {
    const why = webhookUrlProblem(body.webhookUrl, webhooks);
    if (why)
      throw new InvalidRequestError([{ code: 'custom', path: ['webhookUrl'], message: why, input: body.webhookUrl }], {
        in: 'body',
      });
  }
  return RunRequest.parse({
    requestId,
    ...(body.threadId === undefined ? {} : { threadId: body.threadId }),
    agent: body.agent,
    input: body.input,
    principal: { id: principal.principalId, roles: [...principal.roles] },
    metadata: body.metadata,
    concurrency: body.concurrency,
    ...(body.priority !== undefined ? { priority: body.priority } : {}),
    ...(body.webhookUrl !== undefined ? { webhook: { url: body.webhookUrl } } : {}),
  });
}

export const RunAcceptedSchema = z
  .object({
    runId: z.string(),
    threadId: z.string(),
    requestId: z.string().describe('The Idempotency-Key, or a generated id when none was sent'),
    status: z.literal('accepted'),
    links: z.object({ events: z.string(), run: z.string(), thread: z.string() }),
  })
  .describe('RunAccepted');
export type RunAccepted = z.infer<typeof RunAcceptedSchema>;

/**
 * The 202 answer. Both ids are derived from (tenant, requestId) exactly as the orchestrator derives
 * them, so a resent request gets the same ids without anyone looking anything up.
 */
export function runAccepted(tenantId: string, request: RunRequest): RunAccepted {
  const threadId = request.threadId ?? threadIdFor(tenantId, request.requestId);
  return {
    runId: runIdFor(tenantId, request.requestId),
    threadId,
    requestId: request.requestId,
    status: 'accepted',
    links: {
      events: `/v1/threads/${encodeURIComponent(threadId)}/events`,
      run: `/v1/runs/${encodeURIComponent(runIdFor(tenantId, request.requestId))}`,
      thread: `/v1/threads/${encodeURIComponent(threadId)}`,
    },
  };
}
