import type { Clock } from '@ratchet/domain';

export type { Clock };

/**
 * The system clock, shifted by `offsetMs`: where the schedule ticker and the webhook sender read the
 * time. The offset is test-only (`RATCHET_TEST_CLOCK_OFFSET_MS`, see docs/schedules.md).
 */
export function offsetClock(offsetMs = 0): Clock {
  return { now: () => new Date(Date.now() + offsetMs) };
}
