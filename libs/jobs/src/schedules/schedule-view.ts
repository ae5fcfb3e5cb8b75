import type { ScheduleTickRecord, StoredSchedule } from '@ratchet/adapters';
import { runIdFor, type ScheduleView } from '@ratchet/contracts';
import { scheduleThreadId } from '@ratchet/domain';

/** A stored schedule as the API shows it. */
export function scheduleView(stored: StoredSchedule, ticks?: ScheduleTickRecord[]): ScheduleView {
  const s = stored.schedule;
  return {
    id: s.id,
    agent: s.agent,
    input: s.input,
    ...(s.timing.kind === 'cron'
      ? { cron: s.timing.expression, timezone: s.timing.timezone }
      : { everySeconds: s.timing.everyMs / 1000 }),
    thread: s.thread,
    ...(s.thread === 'shared' ? { threadId: scheduleThreadId(s.tenantId, s.id) } : {}),
    overlap: s.overlap,
    catchUp: s.catchUp.kind,
    ...(s.catchUp.kind === 'all' ? { catchUpMax: s.catchUp.max } : {}),
    ...(s.endAt ? { endAt: s.endAt } : {}),
    ...(s.webhookUrl ? { webhookUrl: s.webhookUrl } : {}),
    paused: s.paused,
    ...(stored.pausedReason ? { pausedReason: stored.pausedReason } : {}),
    createdBy: s.principal.id,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
    nextDueAt: stored.nextDueAt,
    lastRunId: stored.lastRunId,
    ...(ticks
      ? {
          recentTicks: ticks.map((t) => ({
            ...t,
            runId: t.requestId ? runIdFor(s.tenantId, t.requestId) : null,
          })),
        }
      : {}),
  };
}
