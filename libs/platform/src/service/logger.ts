import pino, { type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs, one line per record, with the service name on every line. */
export function createLogger(service: string, level: string, instance: string): Logger {
  return pino({ level, base: { service, instance }, timestamp: pino.stdTimeFunctions.isoTime });
}
