import type { RecordModelWait } from './thread.commands';
import { waitedCommandId, type DecisionBuilder } from './decision.builder';
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
  const bound = c.bound === 'concurrent' ? 'calls at once' : `${c.bound} per window`;
  d.emit({
    type: 'model.requested',
    runId: run.runId,
    data: {
      step: run.step,
      attempt: run.modelCall.attempt,
      commandId: waitedCommandId(run.modelCall.commandId),
      retryReason: `waiting for the provider limit ${c.limit} (${bound}) until ${c.until}`,
      notBefore: c.until,
      waitFor: { limit: c.limit, bound: c.bound },
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
    notBefore: c.until,
  });
}
