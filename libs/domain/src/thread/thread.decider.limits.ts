import type { Failure, LimitBound } from '@ratchet/contracts';
import type { RecordModelResult, RecordModelWait } from './thread.commands';
import { waitedCommandId, waitsOf, type DecisionBuilder } from './decision.builder';
import { later, modelRetryDelayMs } from './model-retry';
import { fail } from './run.transitions';
import type { ActiveRun } from './thread.state';
import { redelivered } from './thread.decider.recovery';
import { ignored } from './thread.decider.settling';

/**
 * A provider limit had no room for the run's model call (docs/flow-control.md): the same attempt is
 * commanded again for when the limit has room, as a new command (`:wait:<n>`) held back until then like a
 * retry's backoff. A named wait: no model call was made, so it is not an attempt and not a call of the
 * run's model-call budget, and its length is left out of the run's working time.
 */
export function recordModelWait(d: DecisionBuilder, c: RecordModelWait): void {
  const found = d.state.active;
  if (!found || found.runId !== c.runId || found.phase !== 'model' || found.modelCall?.commandId !== c.commandId) {
    ignored(d, c, 'model.wait', c.commandId, `waiting:${c.limit}`);
    return;
  }
  // The worker that answered took over from one that died in the call: that one may have asked the model.
  if (c.delivery && c.delivery > 1) redelivered(d, found, c.delivery, c.worker ?? 'unknown');
  const run = d.state.active;
  if (!run?.modelCall) return; // the redelivery used the last attempt: the run failed
  const bound =
    c.bound === 'concurrent'
      ? 'calls at once'
      : c.bound === 'share'
        ? "its tenant's share: a window's worth of its calls reserved"
        : `${c.bound} per window`;
  askAgainAt(d, run, run.modelCall, c.until, `waiting for the provider limit ${c.limit} (${bound}) until ${c.until}`, {
    limit: c.limit,
    bound: c.bound,
  });
}

/**
 * The run's current model call, commanded again for `until` as the same attempt under a new command id,
 * with why and for what it waits (a named wait: see `model.requested`'s `waitFor`).
 */
function askAgainAt(
  d: DecisionBuilder,
  run: ActiveRun,
  call: NonNullable<ActiveRun['modelCall']>,
  until: string,
  reason: string,
  waitFor: { limit: string; bound: LimitBound },
): void {
  d.emit({
    type: 'model.requested',
    runId: run.runId,
    data: {
      step: run.step,
      attempt: call.attempt,
      commandId: waitedCommandId(call.commandId),
      retryReason: reason.slice(0, 500),
      notBefore: until,
      waitFor,
    },
  });
  const next = d.state.active?.modelCall;
  if (!next) return;
  d.send({
    kind: 'model.call',
    runId: run.runId,
    step: run.step,
    attempt: next.attempt,
    commandId: next.commandId,
    notBefore: until,
  });
}

/**
 * The provider answered 429 (`rate_limited`). While the run's rate-limit wait budget lasts, the same
 * attempt is commanded again after the provider's Retry-After (at least; backoff with jitter when it gave
 * none): a named wait, like a provider limit's — not an attempt, not a model call of the budget (a 429 is
 * not billed), not working time. Past the budget the run fails with `model.rate_limited`, naming the
 * limit the key is under and the budget. False when the run has no such budget (requested before it
 * existed): its 429s are attempts, as they were.
 */
export function waitsOutRateLimit(
  d: DecisionBuilder,
  run: ActiveRun,
  c: RecordModelResult,
  error: Failure & { retryAfterMs?: number | undefined },
): boolean {
  const budgetSeconds = run.limits?.rateLimitWaitSeconds;
  const call = run.modelCall;
  if (budgetSeconds === undefined || !call || error.code !== 'rate_limited' || !error.retryable) return false;
  const wait = modelRetryDelayMs(waitsOf(call.commandId) + 1, error.retryAfterMs, c.commandId);
  const waited = run.rateLimitedMs ?? 0;
  const who = c.limit ? `the provider (limit ${c.limit})` : 'the provider';
  if (waited + wait > budgetSeconds * 1000) {
    fail(d, run, {
      code: 'model.rate_limited',
      message:
        `step ${run.step}: ${who} kept answering 429 (rate limited); the run waited ${seconds(waited)} s in all and the next wait (${seconds(wait)} s) would pass its rate-limit wait budget of ${budgetSeconds} s; last error: ${error.message}`.slice(
          0,
          4000,
        ),
      retryable: false,
    });
    return true;
  }
  const until = later(c.at, wait);
  askAgainAt(
    d,
    run,
    call,
    until,
    `${who} answered 429 (rate limited): waiting until ${until}, ${seconds(waited + wait)} s of the run's ${budgetSeconds} s rate-limit wait budget; ${error.message}`,
    { limit: c.limit ?? 'provider', bound: 'rate_limited' },
  );
  return true;
}

function seconds(ms: number): string {
  return (Math.round(ms / 100) / 10).toString();
}
