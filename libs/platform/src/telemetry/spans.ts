import { randomBytes } from 'node:crypto';
import {
  context,
  createTraceState,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type TimeInput,
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

type StoredTrace = { traceparent: string; tracestate?: string | undefined } | string | null | undefined;

/** The span a stored W3C trace context names (undefined for a missing or malformed one). */
export function spanContextOf(stored: StoredTrace): SpanContext | undefined {
  const traceparent = typeof stored === 'string' ? stored : stored?.traceparent;
  const m = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent ?? '');
  if (!m) return undefined;
  const tracestate = typeof stored === 'object' ? stored?.tracestate : undefined;
  const spanContext: SpanContext = {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: parseInt(m[3]!, 16) & 1,
    isRemote: true,
    ...(tracestate ? { traceState: createTraceState(tracestate) } : {}),
  };
  return isSpanContextValid(spanContext) ? spanContext : undefined;
}

/** A link to the span a stored trace context names, with why (`ratchet.link.reason`, see LINK). */
export function linkTo(stored: StoredTrace, attributes: Attributes = {}): Link | undefined {
  const spanContext = spanContextOf(stored);
  return spanContext && { context: spanContext, attributes };
}

/** True when the active span is recorded (telemetry on): worth reading what only a span would show. */
export function activeSpanRecording(): boolean {
  return trace.getActiveSpan()?.isRecording() === true;
}

/** Adds links to the active span (links known only once the span's work has read them from storage). */
export function linkActiveSpan(...links: Array<Link | undefined>): void {
  const span = trace.getActiveSpan();
  for (const link of links) if (link) span?.addLink(link);
}

/**
 * A span for something that already happened (a wait), from `start` to `end`, as a child of the span a
 * stored trace context names (a root span when there is none). Never ends before it starts.
 */
export function recordSpan(
  name: string,
  attributes: Attributes,
  times: { start: number; end: number },
  parent: StoredTrace,
): void {
  const parentContext = spanContextOf(parent);
  const ctx = parentContext ? trace.setSpanContext(ROOT_CONTEXT, parentContext) : ROOT_CONTEXT;
  const startTime: TimeInput = times.start;
  const span = tracer().startSpan(name, { attributes, kind: SpanKind.INTERNAL, startTime }, ctx);
  span.end(Math.max(times.start, times.end));
}
