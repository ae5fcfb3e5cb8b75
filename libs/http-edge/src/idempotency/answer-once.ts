import type { IdempotencyKeysRepository } from '@ratchet/adapters';
import { parseRequest } from '../problem-details';
import type { EdgeLogger, EdgePrincipal } from '../route-helpers';
import { IDEMPOTENCY_KEY_HEADER, IdempotencyKey } from '../runs/run-request-mapping';
import {
  answerSubjects,
  decideOnTakenKey,
  KEY_HOLD_SECONDS,
  keyProblem,
  requestFingerprint,
  type KeyRequest,
} from './idempotent-answers';

/** A request to a route that takes Idempotency-Key, as the HTTP layer sees it. */
export interface KeyedRequest {
  principal: EdgePrincipal;
  /** `POST /v1/runs/:runId/cancel`: the method and the route's path pattern. */
  operation: string;
  headers: Record<string, string | string[] | undefined>;
  params: unknown;
  query: unknown;
  body: unknown;
}

/** What the route answered: its status and body. */
export interface RouteAnswer {
  status: number;
  body: unknown;
}

/**
 * Answers a request at most once per Idempotency-Key (docs/api.md#idempotency-keys): without a key the
 * route just runs; with one, the key is claimed first — the same request answered before gets the stored
 * answer and the route does not run; another request with the key, or one still being answered, gets its
 * 409. A route that fails (a problem, the bus down) frees the key, so a retry with it is done afresh; a
 * gateway that dies while answering frees it after its hold (KEY_HOLD_SECONDS unless configured). Routes stay idempotent on their own
 * where a crash could fall between their effect and the stored answer (run requests by their request id).
 */
export class IdempotentAnswers {
  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly logger: EdgeLogger,
    private readonly now: () => number = () => Date.now(),
    /** How long a claimed key is held for the gateway answering it (GATEWAY_IDEMPOTENCY_HOLD_SECONDS). */
    private readonly holdSeconds: number = KEY_HOLD_SECONDS,
  ) {}

  /** The key the request carries (validated), or undefined. */
  keyOf(headers: KeyedRequest['headers']): string | undefined {
    const raw = headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
    if (raw === undefined) return undefined;
    const value = Array.isArray(raw) ? raw.join(',') : raw;
    return parseRequest(IdempotencyKey, value, { in: 'header', name: IDEMPOTENCY_KEY_HEADER });
  }

  /**
   * Runs `route` once for the request's key; `replay` writes a stored answer (the caller sets the status).
   * Returns what the route returned, or the stored body.
   */
  async answer(
    request: KeyedRequest,
    route: () => Promise<RouteAnswer>,
    replay: (answer: RouteAnswer) => void,
  ): Promise<unknown> {
    const key = this.keyOf(request.headers);
    if (key === undefined) return (await route()).body;
    const tenantId = request.principal.tenantId;
    const asked: KeyRequest = {
      operation: request.operation,
      fingerprint: requestFingerprint({
        principalId: request.principal.principalId,
        operation: request.operation,
        params: request.params,
        query: request.query,
        body: request.body,
      }),
    };
    const now = this.now();
    const claimed = await this.keys.claim({
      tenantId,
      key,
      ...asked,
      principalId: request.principal.principalId,
      holdUntil: new Date(now + this.holdSeconds * 1000).toISOString(),
      now: new Date(now).toISOString(),
    });
    if (claimed.use === 'taken') {
      const decision = decideOnTakenKey(claimed.held, asked, now);
      if (decision.kind !== 'replay') throw keyProblem(key, decision);
      replay({ status: decision.status, body: decision.body });
      return decision.body;
    }
    let answered: RouteAnswer;
    try {
      answered = await route();
    } catch (error) {
      await this.keys
        .release(tenantId, key)
        .catch((releaseError: unknown) =>
          this.logger.warn(
            { err: releaseError, key },
            'could not free an Idempotency-Key after a failed request; it frees itself when its hold ends',
          ),
        );
      throw error;
    }
    try {
      await this.keys.answer(tenantId, key, { ...answered, ...answerSubjects(answered.body) });
    } catch (error) {
      // Answered, not recorded: a retry after the hold does the request again (routes are idempotent).
      this.logger.warn({ err: error, key }, 'could not store the answer of an Idempotency-Key');
    }
    return answered.body;
  }
}
