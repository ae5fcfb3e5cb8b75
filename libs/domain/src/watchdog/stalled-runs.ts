import type { ThreadCommand } from '../thread/thread.commands';
import { timeBudget } from '../thread/run.budget';
import { waitOf } from '../thread/run.waits';
import type { ActiveRun, ThreadState } from '../thread/thread.state';

/** What the outbox row of the run's current model call says (absent: no row, e.g. pruned). */
export interface ModelCallRow {
  sentAt: string | null;
  /** The lease's end (`infinity` when fenced), or a delayed row's due time; null when never leased. */
  availableAt: string | null;
  leasedBy: string | null;
}

export interface RunCandidate {
  tenantId: string;
  threadId: string;
  version: number;
  runId: string;
  startedAt: string | null;
  updatedAt: string;
  state: ThreadState;
  /** In the model phase: the current call's row. */
  modelCall?: ModelCallRow | undefined;
}

export interface WatchdogLimits {
  stepTimeoutMs: number;
  runTimeoutMs: number;
  /**
   * How long a published model call may wait for a worker to take it before it counts as lost (its
   * message gone): at least the step budget. Waiting in a queue behind busy workers is not a stall.
   */
  lostAfterMs: number;
}

/** What the watchdog does: a command for the run, and for a lost model call, the row to fence first. */
export type WatchdogAction =
  { command: ThreadCommand; fence?: undefined } | { command: ThreadCommand; fence: { id: string; idleMs: number } };

/**
 * What the watchdog does with a run that made no progress for a while (pure, so it is tested without
 * a clock):
 * - past its time budget it fails (its work in flight is stopped): the budget the run was requested with
 *   (working time, which leaves out its waits; wall time for older runs), else the agent's run timeout;
 * - in the model phase, progress means the call is alive, not that the thread changed: a call whose row
 *   is leased (a live worker renews it), waiting to be published, or published less than `lostAfterMs`
 *   ago (still queued for a worker) is left alone however long it takes; one that nobody holds or took
 *   for longer is lost: its row is fenced (nobody may take it any more) and the next attempt commanded;
 * - in the tool phase, after a step budget without a result, the calls are sent again under their
 *   idempotency keys (the effect ledger dedups, and ignores a call still running elsewhere);
 * - a run that only waits for a human (approval, uncertain effect) is left alone.
 */
export function watchdogAction(
  run: RunCandidate,
  limits: WatchdogLimits,
  now: Date,
  worker: string,
): WatchdogAction | undefined {
  const active = run.state.active;
  if (!active || active.runId !== run.runId) return undefined;
  const base = { tenantId: run.tenantId, threadId: run.threadId, at: now.toISOString(), runId: run.runId };
  const breach = overTime(active, run, limits, now);
  if (breach) return { command: { ...base, type: 'ExpireRun', reason: breach } };
  const resume = (reason: string): ThreadCommand => ({
    ...base,
    type: 'ResumeRun',
    reason,
    worker,
    fromVersion: run.version,
  });
  const budget = `step budget ${Math.round(limits.stepTimeoutMs / 1000)} s`;
  if (active.phase === 'model' && active.modelCall) {
    const row = run.modelCall;
    const idleSince = (r: ModelCallRow) => {
      if (r.availableAt === 'infinity') return 0;
      const times = [r.availableAt, r.sentAt].filter((t): t is string => t !== null).map((t) => Date.parse(t));
      return times.length > 0 ? Math.max(...times) : Date.parse(run.updatedAt);
    };
    if (!row) {
      // No row to ask (pruned, or written before rows were named by their command): fall back to the thread.
      const idleMs = now.getTime() - Date.parse(run.updatedAt);
      if (idleMs <= limits.stepTimeoutMs) return undefined;
      return {
        command: resume(
          `watchdog: model call ${active.modelCall.commandId} made no progress for ${Math.round(idleMs / 1000)} s (${budget})`,
        ),
      };
    }
    const fenced = row.availableAt === 'infinity';
    const leased = !fenced && row.availableAt !== null && Date.parse(row.availableAt) > now.getTime();
    if (leased || (!fenced && row.sentAt === null)) return undefined; // alive, delayed, or to be published
    const lostAfterMs = Math.max(limits.stepTimeoutMs, limits.lostAfterMs);
    const idleMs = fenced ? lostAfterMs + 1 : now.getTime() - idleSince(row);
    if (idleMs <= lostAfterMs) return undefined;
    return {
      command: resume(
        `watchdog: model call ${active.modelCall.commandId} is lost: no worker held or took it for ${Math.round(idleMs / 1000)} s (limit ${Math.round(lostAfterMs / 1000)} s)`,
      ),
      fence: { id: active.modelCall.commandId, idleMs: lostAfterMs },
    };
  }
  const idleMs = now.getTime() - Date.parse(run.updatedAt);
  if (idleMs <= limits.stepTimeoutMs) return undefined;
  if (waitOf(active)) return undefined;
  return { command: resume(`watchdog: no progress for ${Math.round(idleMs / 1000)} s (${budget})`) };
}

/** Why the run is past its time budget (absent: it is not). */
function overTime(active: ActiveRun, run: RunCandidate, limits: WatchdogLimits, now: Date): string | undefined {
  const at = now.toISOString();
  if (active.limits?.workingTimeSeconds !== undefined || active.limits?.wallTimeSeconds !== undefined)
    return timeBudget(active, at)?.error.message;
  // Requested before budgets were fixed on the run: the agent's run timeout, as wall time.
  if (!run.startedAt || now.getTime() - Date.parse(run.startedAt) <= limits.runTimeoutMs) return undefined;
  return `the run has taken ${Math.round((now.getTime() - Date.parse(run.startedAt)) / 1000)} s, past its wall-time budget of ${Math.round(limits.runTimeoutMs / 1000)} s`;
}
