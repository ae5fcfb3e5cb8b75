import { headers as natsHeaders, type NatsConnection } from 'nats';
import type { MessagePublisher, PublishOptions, PublishResult } from '@ratchet/adapters';

/** Outbox rows with this header go out on core NATS: a caller's reply subject belongs to no stream. */
export const CORE_PUBLISH_HEADER = 'Ratchet-Publish';

/**
 * Publishes to JetStream, except rows marked for core NATS (replies to a requester's `replyTo`), which
 * are flushed to the server before they count as sent.
 */
export class RoutingPublisher implements MessagePublisher {
  constructor(
    private readonly nc: NatsConnection,
    private readonly jetstream: MessagePublisher,
  ) {}

  async publish(subject: string, payload: unknown, opts: PublishOptions): Promise<PublishResult> {
    const marked = Object.entries(opts.headers ?? {}).some(
      ([k, v]) => k.toLowerCase() === CORE_PUBLISH_HEADER.toLowerCase() && v === 'core',
    );
    if (!marked) return this.jetstream.publish(subject, payload, opts);
    const h = natsHeaders();
    for (const [k, v] of Object.entries(opts.headers ?? {}))
      if (k.toLowerCase() !== CORE_PUBLISH_HEADER.toLowerCase()) h.set(k, v);
    h.set('Nats-Msg-Id', opts.msgId);
    this.nc.publish(subject, new TextEncoder().encode(JSON.stringify(payload)), { headers: h });
    await this.nc.flush();
    return { seq: 0, duplicate: false };
  }
}
