/** Where the ticker reads the time: injected, so a test can step it. */
export interface Clock {
  now(): Date;
}

/** The system clock, shifted by `offsetMs` (test-only: `RATCHET_TEST_CLOCK_OFFSET_MS`, see docs/schedules.md). */
export function systemClock(offsetMs = 0): Clock {
  return { now: () => new Date(Date.now() + offsetMs) };
}
