import {
  MEMORY_CONTRACTS,
  parseMemorySubject,
  type MemoryFailureReply,
  type MemoryOp,
  type MemoryReply,
  type MemoryRequest,
} from '@ratchet/contracts';
import { memoryFailure } from '@ratchet/domain';
import type { z } from 'zod';

export type Parsed<T> = { ok: true; value: T } | MemoryFailureReply;

/** Tenant and op from the subject: the only place a tenant may come from. */
export function routeOf(prefix: string, subject: string): Parsed<{ tenant: string; op: MemoryOp }> {
  const route = parseMemorySubject(prefix, subject);
  return route
    ? { ok: true, value: route }
    : memoryFailure('invalid', `subject ${subject} is not ${prefix}.memory.<tenant>.<op>`, { field: 'subject' });
}

/** The request body as the op's zod schema reads it; the first field at fault is named in `field`. */
export function parseRequest<O extends MemoryOp>(op: O, data: Uint8Array): Parsed<MemoryRequest<O>> {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(data));
  } catch {
    return memoryFailure('invalid', 'body: expected a JSON object', { field: 'body' });
  }
  const schema: z.ZodType = MEMORY_CONTRACTS[op].request;
  const result = schema.safeParse(body);
  if (result.success) return { ok: true, value: result.data as MemoryRequest<O> };
  const described = result.error.issues.slice(0, 5).map((issue) => {
    // A strict body names the stray key itself, e.g. a `tenantId` that only the subject may carry.
    const path = issue.code === 'unrecognized_keys' ? [...issue.path, ...issue.keys] : issue.path;
    return { field: path.map(String).join('.') || 'body', message: issue.message };
  });
  const first = described[0] ?? { field: 'body', message: 'invalid' };
  return memoryFailure('invalid', described.map((d) => `${d.field}: ${d.message}`).join('; '), {
    field: first.field,
  });
}

/** A database error about the data itself (SQLSTATE class 22, e.g. a NUL character Postgres cannot store). */
export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

export type AnyMemoryReply = MemoryReply<MemoryOp>;
