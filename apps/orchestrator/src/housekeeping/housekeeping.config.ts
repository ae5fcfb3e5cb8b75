import { z } from 'zod';
import { InvalidTimingError, tickClock, type HousekeepingSettings } from '@ratchet/domain';
import {
  ConfigError,
  envBoolean,
  envString,
  parseAge,
  parseRetentionPolicy,
  type RetentionPolicy,
} from '@ratchet/platform';

const DAY = 86_400_000;
const AGE_EXPECTED = 'expected an age such as 90m, 12h, 7d or 4w, or off';

/** An age (`m`, `h`, `d`, `w`) in milliseconds, or `off` (null): that housekeeping task does not run. */
export function envAge() {
  return z
    .string({ error: AGE_EXPECTED })
    .refine((v) => v.trim().toLowerCase() === 'off' || parseAge(v) !== undefined, { error: AGE_EXPECTED })
    .transform((v) => (v.trim().toLowerCase() === 'off' ? null : parseAge(v)!));
}

/** The orchestrator's housekeeping variables (docs/runbooks/retention.md). */
export const housekeepingConfigFields = {
  /** Run the built-in housekeeping schedule in this process (every orchestrator may: a tick runs once). */
  HOUSEKEEPING_ENABLED: envBoolean().default(true),
  /** When it ticks: a cron expression (5 fields, or 6 with seconds), read in HOUSEKEEPING_TIMEZONE. */
  HOUSEKEEPING_CRON: envString().default('17 3 * * *'),
  HOUSEKEEPING_TIMEZONE: envString().default('UTC'),
  /** Thread retention (compact/drop finished threads): `<tenant|default>=<compact|drop>:<age>,...`; empty: none. */
  RATCHET_RETENTION: z.string().default(''),
  /** Dedup inbox rows (every service schema) processed longer ago than this. */
  HOUSEKEEPING_INBOX_MAX_AGE: envAge().default(7 * DAY),
  /** Failed-message records (every service schema). */
  HOUSEKEEPING_FAILED_MESSAGES_MAX_AGE: envAge().default(30 * DAY),
  /** Webhook deliveries that ended (delivered or dead); pending ones are never pruned. */
  HOUSEKEEPING_WEBHOOKS_MAX_AGE: envAge().default(30 * DAY),
  /** Records of schedule ticks (history only; schedules keep their cursor). */
  HOUSEKEEPING_SCHEDULE_TICKS_MAX_AGE: envAge().default(30 * DAY),
  /** Idempotency-Keys the gateway answered (a key used again after this is a new key). */
  HOUSEKEEPING_IDEMPOTENCY_KEYS_MAX_AGE: envAge().default(7 * DAY),
};

type Fields = { [K in keyof typeof housekeepingConfigFields]: z.output<(typeof housekeepingConfigFields)[K]> };

/**
 * The housekeeping schedule and the retention policy from the parsed configuration. Throws a
 * ConfigError naming the variable for a cron, time zone or policy the process cannot run with.
 */
export function housekeepingFromConfig(config: Fields): {
  settings: HousekeepingSettings;
  retention: RetentionPolicy | undefined;
} {
  const timing = {
    kind: 'cron' as const,
    expression: config.HOUSEKEEPING_CRON,
    timezone: config.HOUSEKEEPING_TIMEZONE,
  };
  try {
    tickClock(timing, new Date(0));
  } catch (error) {
    if (!(error instanceof InvalidTimingError)) throw error;
    throw new ConfigError('orchestrator', [
      {
        variable: error.field === 'timezone' ? 'HOUSEKEEPING_TIMEZONE' : 'HOUSEKEEPING_CRON',
        expected: error.message,
        received: error.field === 'timezone' ? config.HOUSEKEEPING_TIMEZONE : config.HOUSEKEEPING_CRON,
      },
    ]);
  }
  const retention =
    config.RATCHET_RETENTION.trim() === '' ? undefined : parseRetentionPolicy(config.RATCHET_RETENTION, 'orchestrator');
  return {
    settings: {
      timing,
      threads: retention !== undefined,
      ages: {
        inbox: config.HOUSEKEEPING_INBOX_MAX_AGE,
        'failed-messages': config.HOUSEKEEPING_FAILED_MESSAGES_MAX_AGE,
        'webhook-deliveries': config.HOUSEKEEPING_WEBHOOKS_MAX_AGE,
        'schedule-ticks': config.HOUSEKEEPING_SCHEDULE_TICKS_MAX_AGE,
        'idempotency-keys': config.HOUSEKEEPING_IDEMPOTENCY_KEYS_MAX_AGE,
      },
    },
    retention,
  };
}
