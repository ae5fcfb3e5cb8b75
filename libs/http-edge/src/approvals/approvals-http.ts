import {
  ApprovalChoice,
  ApprovalKind,
  ApprovalStatus,
  Json,
  SubjectToken,
  type ApprovalsReply,
} from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';
import { z } from 'zod';
import { PROBLEM_TYPES, problemType, ProblemException } from '../problem-details';

/** `kind=tool,escalation`: one kind or several, comma-separated. */
const KindList = z
  .string()
  .regex(
    /^(tool|escalation|waitpoint)(,(tool|escalation|waitpoint)){0,2}$/,
    'tool, escalation or waitpoint, comma-separated',
  )
  .transform((v) => [...new Set(v.split(','))] as z.infer<typeof ApprovalKind>[]);

/** `GET /v1/approvals` query: `status`, `kind`, `threadId`, `agent`, `olderThan` (seconds, or `30s`, `5m`, `2h`, `1d`), `limit`. */
export const ListApprovalsQuery = z.strictObject({
  status: ApprovalStatus.optional(),
  kind: KindList.optional(),
  threadId: SubjectToken.optional(),
  agent: z.string().min(1).max(128).optional(),
  olderThan: z
    .string()
    .regex(/^\d{1,9}(s|m|h|d)?$/, 'a duration like 90, 90s, 15m, 2h or 1d')
    .transform((v) => {
      const unit = /[smhd]$/.test(v) ? v.slice(-1) : 's';
      const n = Number(/[smhd]$/.test(v) ? v.slice(0, -1) : v);
      return n * ({ s: 1, m: 60, h: 3600, d: 86400 } as Record<string, number>)[unit]!;
    })
    .optional(),
  limit: z.coerce.number().int().positive().max(500).optional(),
});

/** `GET /v1/waitpoints` query: `status`, `threadId`, `agent`, `limit`. */
export const ListWaitpointsQuery = z.strictObject({
  status: z.enum(['pending', 'completed', 'failed', 'expired', 'cancelled']).optional(),
  threadId: SubjectToken.optional(),
  agent: z.string().min(1).max(128).optional(),
  limit: z.coerce.number().int().positive().max(500).optional(),
});

/** `POST /v1/approvals/:id/decision` body. Escalations take `happened` (with `result`), `retry` or `fail`. */
export const DecisionBody = z.strictObject({
  decision: ApprovalChoice,
  reason: z.string().max(2000).default(''),
  result: Json.optional(),
});

/**
 * `POST /v1/waitpoints/:id/complete` body: `{ "result": … }` completes the waitpoint with a result (checked
 * against the schema its tool declared); `{ "error": { "code", "message" } }` reports that the job outside
 * failed. Exactly one of the two.
 */
export const CompleteWaitpointBody = z
  .strictObject({
    result: Json.optional().describe('The result the run goes on with (must fit the schema the tool declared)'),
    error: z
      .strictObject({
        code: z.string().min(1).max(128).describe('A name for what went wrong, e.g. "ci.failed"'),
        message: z.string().max(2000).describe('What went wrong, for the model'),
      })
      .optional()
      .describe('Instead of a result: the job outside failed'),
  })
  .refine((b) => (b.result === undefined) !== (b.error === undefined), {
    message: 'give either "result" (the job finished) or "error" (it failed), not both and not neither',
  });
export type CompleteWaitpointBody = z.infer<typeof CompleteWaitpointBody>;

export const ApprovalIdParam = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_-]+$/, 'an approval id');

/** An error reply of the approvals service as the HTTP problem the client sees. */
export function problemFor(reply: Extract<ApprovalsReply, { ok: false }>): Error {
  const { code, message, refusal } = reply.error;
  // A named refusal (a waitpoint completion): its own problem type, and the name as `code`.
  if (refusal && code !== 'unavailable' && code !== 'not_found')
    return new ProblemException({
      type: problemType(refusal.replace(/[._]/g, '-')),
      title: REFUSAL_TITLE[code],
      status: REFUSAL_STATUS[code],
      detail: message,
      code: refusal,
    });
  switch (code) {
    case 'not_found':
      // Another tenant's id answers exactly like an unknown one.
      return new ProblemException({
        type: problemType('not-found'),
        title: 'Not found',
        status: 404,
        detail: 'No approval with this id.',
      });
    case 'forbidden':
      return new ProblemException({ type: PROBLEM_TYPES.forbidden, title: 'Forbidden', status: 403, detail: message });
    case 'conflict':
      return new ProblemException({ type: problemType('conflict'), title: 'Conflict', status: 409, detail: message });
    case 'invalid':
      return new ProblemException({
        type: PROBLEM_TYPES.validation,
        title: 'Invalid request',
        status: 400,
        detail: message,
      });
    case 'unavailable':
      return new TransientError(`approvals: ${message}`, 'approvals.unavailable');
  }
}

/** Parses a query string or path parameter; a mismatch is a 400 naming each parameter at fault. */
export function parseParams<S extends z.ZodType>(schema: S, value: unknown, where: 'query' | 'path'): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ProblemException({
    type: PROBLEM_TYPES.validation,
    title: 'Invalid request',
    status: 400,
    detail: `The ${where === 'query' ? 'query string' : 'path'} is invalid; see errors.`,
    errors: result.error.issues.map((i) => ({
      detail: `${i.path.join('.') || (where === 'path' ? 'id' : '(query)')}: ${i.message}`,
      code: i.code,
    })),
  });
}

const REFUSAL_STATUS = { invalid: 400, forbidden: 403, conflict: 409 } as const;
const REFUSAL_TITLE = { invalid: 'Invalid request', forbidden: 'Forbidden', conflict: 'Conflict' } as const;
