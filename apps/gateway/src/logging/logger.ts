import type { LoggerService } from '@nestjs/common';
import pino, { type Level, type Logger } from 'pino';

export type { Logger };

/** One JSON object per line on stdout, stamped with the service and instance so logs can be joined. */
export function createLogger(options: { level: string; instance: string }): Logger {
  return pino({
    level: options.level,
    base: { service: 'gateway', instance: options.instance },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Keys never reach a log line, even when someone logs a whole request by mistake.
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.apiKey', '*.secret'],
      censor: '[redacted]',
    },
  });
}

/**
 * Routes Nest's own logging through pino so every line is JSON. Nest's chatty boot messages
 * ("Mapped {/v1/runs, POST} route") are `log` level: they go to debug so `info` stays readable.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: Level, message: unknown, rest: unknown[]): void {
    // Nest passes the context (class name) last, and for errors a stack string before it.
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    const stack = rest.length > 1 && typeof rest[0] === 'string' ? rest[0] : undefined;
    const fields = { context, ...(stack ? { stack } : {}) };
    if (message instanceof Error) this.logger[level]({ ...fields, err: message }, message.message);
    else if (typeof message === 'object' && message !== null) this.logger[level]({ ...fields, ...message });
    else this.logger[level](fields, String(message));
  }
}
