import { ApprovalChoice, ApprovalStatus, Json, SubjectToken, type ApprovalsReply } from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';
import { z } from 'zod';
import { PROBLEM_TYPES, problemType, ProblemException } from '../problem-details';

/** `GET /v1/approvals` query: `status`, `threadId`, `agent`, `olderThan` (seconds, or `30s`, `5m`, `2h`, `1d`), `limit`. */
export const ListApprovalsQuery = z.strictObject({
  status: ApprovalStatus.optional(),
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

/** `POST /v1/approvals/:id/decision` body. Escalations take `happened` (with `result`), `retry` or `fail`. */
export const DecisionBody = z.strictObject({
  decision: ApprovalChoice,
  reason: z.string().max(2000).default(''),
  result: Json.optional(),
});

export const ApprovalIdParam = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_-]+$/, 'an approval id');

/** An error reply of the approvals service as the HTTP problem the client sees. */
export function problemFor(reply: Extract<ApprovalsReply, { ok: false }>): Error {
  const { code, message } = reply.error;
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
