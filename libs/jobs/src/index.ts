// Timed work a service runs beside its message handlers (each a PeriodicPass: schedule ticker, webhook
// sender, housekeeping, watchdog, admission pass) and the requests that manage it (SchedulesApi, WebhooksApi).
// Framework-free; the service wraps each in its own lifecycle or responder. See docs/adr/0036-apps-are-wiring.md.
export { AdmissionPass, type AdmissionPassOptions } from './admission/admission-pass';
export { offsetClock, type Clock } from './clock';
export {
  HOUSEKEEPING_JOB,
  HousekeepingInterruptedError,
  HousekeepingTicker,
  type HousekeepingTickerOptions,
} from './housekeeping/housekeeping-ticker';
export { PeriodicPass } from './periodic-pass';
export { ScheduleTicker, type ScheduleTickerOptions } from './schedules/schedule-ticker';
export { scheduleView } from './schedules/schedule-view';
export { SchedulesApi } from './schedules/schedules-api';
export { tickMessages } from './schedules/tick-messages';
export { Watchdog, type WatchdogAgents, type WatchdogOptions, type WatchdogThreads } from './watchdog/watchdog';
export { webhookBody } from './webhooks/webhook-body';
export { WebhookSender, type WebhookSenderOptions } from './webhooks/webhook-sender';
export { WebhooksApi } from './webhooks/webhooks-api';
export { RevocationHandler, type RevocationOutcome } from './revocations/revocation-handler';
export { PRINCIPAL_REVOKED, revocationMessages, revocationReason } from './revocations/revocation-messages';
