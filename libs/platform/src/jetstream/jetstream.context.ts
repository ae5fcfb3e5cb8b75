import { BaseRpcContext } from '@nestjs/microservices';
import { HEADERS, type Subjects } from '@ratchet/contracts';
import type { ConsumedMessage } from '@ratchet/adapters';

/**
 * What a `@EventPattern('<consumer>')` handler gets as `@Ctx()`: the delivery's metadata and a way to
 * keep a long job alive. The transport already heartbeats every ack_wait/3 while the handler runs;
 * `working()` is for handlers that want to say so explicitly (e.g. between stages of a long tool call).
 */
export class JetStreamContext extends BaseRpcContext<[ConsumedMessage]> {
  constructor(
    message: ConsumedMessage,
    /** The subjects of the transport's prefix: where each tenant's (and thread's) messages belong. */
    readonly subjects: Subjects,
  ) {
    super([message]);
  }

  private get message(): ConsumedMessage {
    return this.args[0];
  }

  getMessage(): ConsumedMessage {
    return this.message;
  }
  getStream(): string {
    return this.message.stream;
  }
  getConsumer(): string {
    return this.message.consumer;
  }
  getSubject(): string {
    return this.message.subject;
  }
  getHeaders(): Record<string, string> {
    return this.message.headers;
  }
  getHeader(name: string): string | undefined {
    const wanted = name.toLowerCase();
    const key = Object.keys(this.message.headers).find((k) => k.toLowerCase() === wanted);
    return key === undefined ? undefined : this.message.headers[key];
  }
  /** 1 on the first delivery. */
  getDeliveryCount(): number {
    return this.message.deliveryCount;
  }
  /** 0 on the first delivery. */
  getRedeliveryCount(): number {
    return this.message.redeliveryCount;
  }
  getStreamSeq(): number {
    return this.message.streamSeq;
  }
  /** `Nats-Msg-Id` — the sender's outbox row id; claim it in the inbox table in the handler's transaction. */
  getMsgId(): string | undefined {
    return this.message.msgId;
  }
  /** W3C trace context of the sender (the transport also makes it the active OTel context). */
  getTraceparent(): string | undefined {
    return this.getHeader(HEADERS.traceparent);
  }
  getTracestate(): string | undefined {
    return this.getHeader(HEADERS.tracestate);
  }
  working(): void {
    this.message.working();
  }
}
