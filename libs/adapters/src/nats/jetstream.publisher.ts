import {
  createInbox,
  ErrorCode,
  Events,
  headers as natsHeaders,
  type Msg,
  type NatsConnection,
  type Subscription,
} from 'nats';
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

export interface JetStreamPublisherOptions {
  /** Wait for a stream's ack this long, ms, unless a publish says otherwise. Default 5000. */
  timeoutMs?: number;
  /** The connection's inbox prefix, when it is not `_INBOX` (subject permissions). */
  inboxPrefix?: string;
}

/** The stream's answer to a publish (a JetStream `PubAck`, or an API error). */
interface PubAck {
  stream?: string;
  seq?: number;
  duplicate?: boolean;
  error?: { code?: number; err_code?: number; description?: string };
}

interface Pending {
  subject: string;
  deadline: number;
  resolve(result: PublishResult): void;
  reject(error: Error): void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** How often unanswered publishes are checked for their deadline, ms. */
const DEADLINE_CHECK_MS = 100;

/**
 * Publishes JSON to JetStream and waits for the stream's ack. An unreachable bus (timeout, no stream
 * listening, connection gone) becomes a TransientError so callers nak/retry later; anything else
 * (payload too big, bad subject, a stream's refusal) is a bug and surfaces as is.
 *
 * It speaks the publish protocol itself instead of `JetStreamClient.publish`, which makes every publish a
 * client request: a request object, a timer and a mux entry each, and — once answered — a `Cancelled`
 * error built (with its stack) only to settle an already settled promise. On the orchestrator's hot path
 * that was about a tenth of its CPU. Here every publish carries a reply subject under one inbox
 * subscription of this publisher's, answers are matched by that subject, and one timer checks the
 * deadlines of all unanswered publishes.
 */
export class JetStreamPublisher implements MessagePublisher {
  private readonly inbox: string;
  private readonly timeoutMs: number;
  private readonly pending = new Map<string, Pending>();
  private subscription: Subscription | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private next = 0;

  constructor(
    private readonly nc: NatsConnection,
    options: JetStreamPublisherOptions = {},
  ) {
    this.inbox = createInbox(options.inboxPrefix);
    this.timeoutMs = options.timeoutMs ?? 5000;
    void nc.closed().then(() =>
      this.rejectWhere(
        () => true,
        (p) => new TransientError(`publishing to ${p.subject} failed: the connection closed`, 'nats.disconnected'),
      ),
    );
    void this.watchPermissions();
  }

  publish(subject: string, payload: unknown, opts: PublishOptions): Promise<PublishResult> {
    const json = JSON.stringify(payload);
    if (json === undefined) {
      return Promise.reject(new TypeError(`cannot publish ${typeof payload} to ${subject}: not JSON-serialisable`));
    }
    const h = natsHeaders();
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      // Nats-Msg-Id is set from msgId below; a stale copy in the row's headers must not win or duplicate.
      if (k.toLowerCase() !== HEADERS.msgId.toLowerCase()) h.set(k, v);
    }
    h.set(HEADERS.msgId, opts.msgId);
    return new Promise<PublishResult>((resolve, reject) => {
      const reply = `${this.inbox}.${++this.next}`;
      try {
        this.subscribe();
        this.nc.publish(subject, encoder.encode(json), { reply, headers: h });
      } catch (error) {
        reject(failure(subject, error));
        return;
      }
      const deadline = Date.now() + (opts.timeoutMs ?? this.timeoutMs);
      this.pending.set(reply, { subject, deadline, resolve, reject });
      this.deadlineTimer ??= setInterval(() => this.expire(), DEADLINE_CHECK_MS).unref();
    });
  }

  /** One subscription for every answer, made before the first publish (the server sees the SUB first). */
  private subscribe(): void {
    this.subscription ??= this.nc.subscribe(`${this.inbox}.*`, {
      callback: (error, msg) => {
        if (!error) return this.answer(msg);
        // The client closes a subscription the server refused (a permissions violation): the next
        // publish subscribes again.
        this.subscription = undefined;
        this.rejectWhere(
          () => true,
          (p) => failure(p.subject, error),
        );
      },
    });
  }

  /**
   * A publish the server refuses (no permission to publish on the subject) gets no answer, only an
   * error on the connection naming the subject: it fails the publishes waiting on that subject at once,
   * as what it is (a plain error, not "no ack in time"), so the relay logs the refusal.
   */
  private async watchPermissions(): Promise<void> {
    for await (const status of this.nc.status()) {
      const refused = status.permissionContext;
      if (status.type !== Events.Error || refused?.operation !== 'publish') continue;
      this.rejectWhere(
        (p) => p.subject === refused.subject,
        (p) => new Error(`publishing to ${p.subject} refused by the server: permissions violation`),
      );
    }
  }

  private answer(msg: Msg): void {
    const p = this.pending.get(msg.subject);
    // Answered after its deadline (already rejected): nothing waits for it.
    if (!p) return;
    this.settled(msg.subject);
    const outcome = ackOf(msg, p.subject);
    if (outcome instanceof Error) p.reject(outcome);
    else p.resolve(outcome);
  }

  /** Rejects every publish whose deadline passed; the timer stops when none waits. */
  private expire(): void {
    const now = Date.now();
    this.rejectWhere(
      (p) => p.deadline <= now,
      (p) => new TransientError(`publishing to ${p.subject} failed: no ack in time`, 'nats.timeout'),
    );
  }

  /** Settles every waiting publish that `matches`, with the error `errorFor` gives it. */
  private rejectWhere(matches: (p: Pending) => boolean, errorFor: (p: Pending) => Error): void {
    for (const [reply, p] of this.pending) {
      if (!matches(p)) continue;
      this.settled(reply);
      p.reject(errorFor(p));
    }
  }

  private settled(reply: string): void {
    this.pending.delete(reply);
    if (this.pending.size === 0 && this.deadlineTimer) {
      clearInterval(this.deadlineTimer);
      this.deadlineTimer = undefined;
    }
  }
}

/** What a stream's answer to a publish on `subject` means: the ack, or why there is none. */
function ackOf(msg: Msg, subject: string): PublishResult | Error {
  // No stream listens on the subject (or JetStream is unavailable): the server's 503 status.
  if (msg.headers?.code === 503) {
    return new TransientError(`publishing to ${subject} failed: no stream answered (503)`, 'nats.no_responders');
  }
  let ack: PubAck;
  try {
    ack = JSON.parse(decoder.decode(msg.data)) as PubAck;
  } catch (error) {
    return new Error(`publishing to ${subject}: the stream's answer is not JSON`, { cause: error });
  }
  if (ack.error) {
    const text = `publishing to ${subject} failed: ${ack.error.description ?? 'stream error'} (${ack.error.code ?? '?'}/${ack.error.err_code ?? '?'})`;
    // 503: the stream (or its cluster) cannot take messages right now.
    return ack.error.code === 503 ? new TransientError(text, 'nats.no_responders') : new Error(text);
  }
  if (!ack.stream || typeof ack.seq !== 'number') {
    return new Error(`publishing to ${subject}: the stream's answer is not an ack`);
  }
  return { seq: ack.seq, duplicate: ack.duplicate === true };
}

/** A NATS client error as a TransientError when it means "the bus is not reachable right now". */
function failure(subject: string, error: unknown): Error {
  const transient = transientCode(error);
  if (transient) {
    return new TransientError(`publishing to ${subject} failed: ${(error as Error).message}`, transient, {
      cause: error,
    });
  }
  return error instanceof Error ? error : new Error(String(error));
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
