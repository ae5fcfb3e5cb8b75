import { PROBLEM_TYPES, ProblemException } from '../problem-details';
import type { Backends } from '../backends/backends';
import type { EdgeLogger } from '../route-helpers';

/** How long a run request waits for the orchestrators' count before it is accepted without it. */
const ADMISSION_TIMEOUT_MS = 500;
/** What a refused caller is told to wait: runs end at their own pace, so a few seconds, then ask again. */
const RUNS_LIMIT_RETRY_AFTER_SECONDS = 5;

/**
 * The gateway's side of the bound on a tenant's runs in flight (docs/security.md#runs-in-flight): before a
 * new run request is put on the bus, the orchestrators are asked how many runs the tenant has in flight
 * (queued, or running and not waiting) and waiting for a human; at either bound the caller gets 429 at once
 * instead of a 202 for a run that would be refused.
 * The orchestrator decides again when the request arrives (the bound is its rule); when it does not answer
 * in time the request is accepted as before, so runs are still taken while the orchestrators restart.
 */
export class RunAdmissionCheck {
  constructor(
    private readonly backends: Pick<Backends, 'threads'>,
    private readonly logger: EdgeLogger,
  ) {}

  /** Throws 429 when the tenant is at its bound and `requestId` has not started a run already (a resend has room). */
  async assertRoom(tenantId: string, requestId: string): Promise<void> {
    let reply;
    try {
      reply = await this.backends.threads(tenantId, 'admission', { requestId }, ADMISSION_TIMEOUT_MS);
    } catch (error) {
      this.logger.warn(
        { err: error, tenantId },
        'runs in flight not known in time: the request is accepted, the orchestrator decides',
      );
      return;
    }
    if (!reply.ok || reply.known) return;
    const waitingLimit = reply.waitingLimit ?? 0;
    if (waitingLimit > 0 && (reply.waitingRuns ?? 0) >= waitingLimit) {
      throw new ProblemException(
        {
          type: PROBLEM_TYPES.rateLimited,
          title: 'Too many runs waiting',
          status: 429,
          detail: `This tenant has ${waitingLimit} runs waiting for a human (an approval, an operator), the most this deployment allows one tenant; decide some, or ask again later (retry after ${RUNS_LIMIT_RETRY_AFTER_SECONDS} s).`,
          code: 'tenant.waiting_runs_limit',
          limit: waitingLimit,
        },
        { 'Retry-After': String(RUNS_LIMIT_RETRY_AFTER_SECONDS) },
      );
    }
    // Past the bound a request is queued for admission, not refused, where the orchestrators queue.
    if (reply.limit === 0 || reply.activeRuns < reply.limit || reply.overBound === 'queue') return;
    throw new ProblemException(
      {
        type: PROBLEM_TYPES.rateLimited,
        title: 'Too many runs in flight',
        status: 429,
        detail: `This tenant has ${reply.limit} runs queued or running (runs waiting for a human not counted), the most this deployment allows one tenant; ask again when some have ended (retry after ${RUNS_LIMIT_RETRY_AFTER_SECONDS} s).`,
        code: 'tenant.runs_limit',
        limit: reply.limit,
      },
      { 'Retry-After': String(RUNS_LIMIT_RETRY_AFTER_SECONDS) },
    );
  }
}
