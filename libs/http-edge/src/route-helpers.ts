import { backendProblem } from './backend-errors';
import type { ServerResponse } from 'node:http';

/** Who is calling, as the gateway verified it from the credential: the tenant comes from here and nowhere else. */
export interface EdgePrincipal {
  readonly tenantId: string;
  /** `key:<api key id>` for API keys, `jwt:<sub>` for JWT bearer tokens. */
  readonly principalId: string;
  readonly roles: readonly string[];
}

/** The principal as the backends' requests carry it (`{ id, roles }`). */
export function principalOf(principal: EdgePrincipal): { id: string; roles: string[] } {
  return { id: principal.principalId, roles: [...principal.roles] };
}

/** What the routes log to (the gateway's pino logger). */
export interface EdgeLogger {
  warn(details: object, message: string): void;
}

/** Answers `body` with `status` (a route whose status depends on the reply: created or not, done or not). */
export function replyWith<T>(res: ServerResponse, status: number, body: T): T {
  res.statusCode = status;
  return body;
}

/** A backend answered `ok` without what the operation returns: a bug on one side, a 500 on this one. */
export class UnexpectedReplyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnexpectedReplyError';
  }
}

/** A backend's reply: `ok`, or the error the client sees as a problem (see backendProblem). */
type BackendReply = { ok: true } | { ok: false; error: Parameters<typeof backendProblem>[0] };

/**
 * The `ok` reply that carries `key`: a refusal becomes its problem (`resource` names what was not found),
 * an `ok` without `key` is an UnexpectedReplyError (`<what> reply without <key>`).
 */
export function okWith<R extends BackendReply, K extends string>(
  reply: R,
  key: K,
  what: string,
  resource: string,
): Extract<R, { ok: true } & Record<K, unknown>> {
  const checked: BackendReply = reply;
  if (!checked.ok) throw backendProblem(checked.error, resource);
  if (!(key in reply)) throw new UnexpectedReplyError(`${what} reply without ${key}`);
  return reply as Extract<R, { ok: true } & Record<K, unknown>>;
}
