// Timed work a service runs beside its message handlers: the schedule ticker, the webhook sender and
// housekeeping, each a PeriodicPass. Framework-free; the service wraps each in its own lifecycle.
// See docs/adr/0036-apps-are-wiring.md.
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
export { tickMessages } from './schedules/tick-messages';
export { webhookBody } from './webhooks/webhook-body';
export { WebhookSender, type WebhookSenderOptions } from './webhooks/webhook-sender';
