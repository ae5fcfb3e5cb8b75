import { ErrorCode, headers as natsHeaders, type JetStreamClient } from 'nats';
import { HEADERS } from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';

export interface PublishOptions {
  /** Becomes `Nats-Msg-Id`: JetStream drops a second publish with the same id within the duplicate window. */
  msgId: string;
  headers?: Record<string, string>;
  /** Wait for the stream's ack this long, ms. Default: the publisher's. */
  timeoutMs?: number;
}

export interface PublishResult {
  seq: number;
  /** True when the stream already had a message with this `msgId` (nothing was stored). */
  duplicate: boolean;
}

/** What the outbox relay and the services need from a publisher; implemented by `JetStreamPublisher`. */
export interface MessagePublisher {
  publish(subject: string, payload: unknown, opts: PublishOptions): Promise<PublishResult>;
}

const encoder = new TextEncoder();

/**
 * Publishes JSON to JetStream and waits for the stream's ack. An unreachable bus (timeout, no stream
 * listening, connection gone) becomes a TransientError so callers nak/retry later; anything else
 * (payload too big, bad subject) is a bug and surfaces as is.
 */
export class JetStreamPublisher implements MessagePublisher {
  constructor(
    private readonly js: JetStreamClient,
    private readonly defaults: { timeoutMs?: number } = {},
  ) {}

  async publish(subject: string, payload: unknown, opts: PublishOptions): Promise<PublishResult> {
    const json = JSON.stringify(payload);
    if (json === undefined)
      throw new TypeError(`cannot publish ${typeof payload} to ${subject}: not JSON-serialisable`);
    const h = natsHeaders();
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      // Nats-Msg-Id is set from msgId below; a stale copy in the row's headers must not win or duplicate.
      if (k.toLowerCase() !== HEADERS.msgId.toLowerCase()) h.set(k, v);
    }
    try {
      const ack = await this.js.publish(subject, encoder.encode(json), {
        msgID: opts.msgId,
        headers: h,
        timeout: opts.timeoutMs ?? this.defaults.timeoutMs ?? 5000,
      });
      return { seq: ack.seq, duplicate: ack.duplicate };
    } catch (error) {
      const transient = transientCode(error);
      if (transient) {
        throw new TransientError(`publishing to ${subject} failed: ${(error as Error).message}`, transient, {
          cause: error,
        });
      }
      throw error;
    }
  }
}

/** `nats.*` code when the error means "the bus is not reachable right now". */
function transientCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  switch (code) {
    case ErrorCode.Timeout:
      return 'nats.timeout';
    case ErrorCode.NoResponders: // also JetStreamNotEnabled: "503"
      return 'nats.no_responders';
    case ErrorCode.ConnectionClosed:
    case ErrorCode.ConnectionDraining:
    case ErrorCode.Disconnect:
    case ErrorCode.ConnectionRefused:
    case ErrorCode.ConnectionTimeout:
      return 'nats.disconnected';
    default:
      return undefined;
  }
}
