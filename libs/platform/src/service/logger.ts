import { AsyncLocalStorage } from 'node:async_hooks';
import { trace } from '@opentelemetry/api';
import pino, { type Logger } from 'pino';

export type { Logger };

/** Tenant, thread and run of the message being handled: every log line inside it carries them. */
export interface LogScope {
  trace_id?: string;
  tenant?: string;
  thread?: string;
  run?: string;
}
export const logScope = new AsyncLocalStorage<LogScope>();

/** The ids a message names (its body, and the trace of its `traceparent` header), for the log scope. */
export function scopeOf(data: unknown, headers: Record<string, string> = {}): LogScope {
  const traceparent = Object.entries(headers).find(([k]) => k.toLowerCase() === 'traceparent')?.[1];
  const traceId = traceparent?.split('-')[1];
  if (typeof data !== 'object' || data === null) return traceId ? { trace_id: traceId } : {};
  const d = data as Record<string, unknown>;
  const pick = (k: string) => (typeof d[k] === 'string' ? (d[k] as string) : undefined);
  const scope: LogScope = traceId ? { trace_id: traceId } : {};
  const tenant = pick('tenantId');
  const thread = pick('threadId');
  const run = pick('runId');
  if (tenant) scope.tenant = tenant;
  if (thread) scope.thread = thread;
  if (run) scope.run = run;
  return scope;
}

/**
 * Structured JSON logs, one line per record, with the service name, and — inside a handled message —
 * the trace id, tenant, thread and run, so an SRE goes from an event to its trace to its logs.
 */
export function createLogger(service: string, level: string, instance: string): Logger {
  return pino({
    level,
    base: { service, instance },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin() {
      const span = trace.getActiveSpan()?.spanContext();
      const scope = logScope.getStore();
      return { ...scope, ...(span ? { trace_id: span.traceId, span_id: span.spanId } : {}) };
    },
  });
}
