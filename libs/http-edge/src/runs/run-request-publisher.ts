import type { MessagePublisher, PublishResult } from '@ratchet/adapters';
import { HEADERS, subjects, type CancelRunMessage, type RunRequest, type Subjects } from '@ratchet/contracts';

/** The W3C trace context a request came with, forwarded on what it publishes. */
export interface TraceHeaders {
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}

/** The trace context of a request's headers. */
export function traceOf(headers: Record<string, string | undefined>): TraceHeaders {
  return { traceparent: headers['traceparent'], tracestate: headers['tracestate'] };
}

/** W3C traceparent, version 00; anything else is dropped rather than forwarded. */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * Puts a run request on `<prefix>.requests.<tenant>`. The subject carries the tenant (the orchestrator
 * trusts nothing else), and `Nats-Msg-Id` = `<tenant>:<requestId>` lets JetStream drop a resend within
 * its duplicate window; the orchestrator's inbox catches later ones.
 */
export class RunRequestPublisher {
  private readonly subjects: Subjects;

  constructor(
    private readonly publisher: MessagePublisher,
    private readonly options: { subjectPrefix: string; publishTimeoutMs: number },
  ) {
    this.subjects = subjects(options.subjectPrefix);
  }

  publish(tenantId: string, request: RunRequest, trace: TraceHeaders = {}): Promise<PublishResult> {
    const headers = this.headers('run.request', tenantId, trace);
    return this.publisher.publish(this.subjects.requests(tenantId), request, {
      msgId: `${tenantId}:${request.requestId}`,
      headers,
      timeoutMs: this.options.publishTimeoutMs,
    });
  }

  /**
   * Puts a cancel on the run's thread inbox, `<prefix>.inbox.<tenant>.<thread>`, where the orchestrator
   * applies it in order with everything else that happens to the thread.
   */
  publishCancel(message: CancelRunMessage, trace: TraceHeaders = {}): Promise<PublishResult> {
    return this.publisher.publish(this.subjects.inbox(message.tenantId, message.threadId), message, {
      msgId: message.messageId,
      headers: this.headers('run.cancel', message.tenantId, trace),
      timeoutMs: this.options.publishTimeoutMs,
    });
  }

  private headers(type: string, tenantId: string, trace: TraceHeaders): Record<string, string> {
    const headers: Record<string, string> = { [HEADERS.messageType]: type, [HEADERS.tenant]: tenantId };
    if (trace.traceparent && TRACEPARENT.test(trace.traceparent)) {
      headers[HEADERS.traceparent] = trace.traceparent;
      if (trace.tracestate && trace.tracestate.length <= 512) headers[HEADERS.tracestate] = trace.tracestate;
    }
    return headers;
  }
}
