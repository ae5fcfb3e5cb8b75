import { randomBytes } from 'node:crypto';
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { tracer } from './telemetry';

/** Runs `work` inside a span; errors are recorded and rethrown. */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
  options: { parent?: Context; kind?: SpanKind; links?: Link[] } = {},
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    { attributes, kind: options.kind ?? SpanKind.INTERNAL, links: options.links ?? [] },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

/** The W3C context carried by a message's headers (or the active one when there is none). */
export function contextFromHeaders(headers: Record<string, string>): Context {
  const lower: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) lower[k.toLowerCase()] = v;
  return propagation.extract(context.active(), lower);
}

/** `traceparent`/`tracestate` of the active (or given) context, for headers and stored events. */
export function currentTraceContext(
  ctx: Context = context.active(),
): { traceparent: string; tracestate?: string } | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  const traceparent = carrier['traceparent'];
  if (!traceparent) return undefined;
  return carrier['tracestate'] ? { traceparent, tracestate: carrier['tracestate'] } : { traceparent };
}

/** The trace id inside a traceparent (`00-<trace id>-<span id>-<flags>`). */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent?.split('-')[1];
}

/** A fresh W3C trace context (for a run that arrives without one, with telemetry off). */
export function newTraceContext(): { traceparent: string } {
  return { traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01` };
}
