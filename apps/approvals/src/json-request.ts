import type { z } from 'zod';

/** A request body that did not parse, as the approvals service answers it. */
export interface InvalidRequest {
  ok: false;
  error: { code: 'invalid'; message: string };
}

/**
 * A NATS request body as `schema` reads it, or the `invalid` answer naming each problem
 * (`path: message`), prefixed with `what` ("invalid approvals request: …").
 */
export function parseJsonRequest<S extends z.ZodType>(
  schema: S,
  data: Uint8Array,
  what: string,
): { ok: true; value: z.output<S> } | InvalidRequest {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(data));
  } catch {
    return { ok: false, error: { code: 'invalid', message: 'the request is not JSON' } };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  return { ok: false, error: { code: 'invalid', message: `${what}: ${problems.join('; ')}` } };
}
