import type { JsMsg, MsgHdrs } from 'nats';
import { HEADERS } from '@ratchet/contracts';
import type { Retry } from '@ratchet/domain';
import { retryDecision } from './failure-classification';

/** One delivery as a handler sees it. */
export interface ConsumedMessage {
  stream: string;
  consumer: string;
  subject: string;
  /** The payload, parsed from JSON (validate it: a zod failure is treated as poison). */
  data: unknown;
  headers: Record<string, string>;
  /** 1 on the first delivery. */
  deliveryCount: number;
  /** Deliveries before this one: 0 on the first delivery. */
  redeliveryCount: number;
  streamSeq: number;
  /** `Nats-Msg-Id` (the outbox row id) — the key for the inbox table. */
  msgId: string | undefined;
  /** Resets the ack-wait timer. The loop already calls it every ack_wait/3 while the handler runs. */
  working(): void;
}

export type MessageHandler = (message: ConsumedMessage) => Promise<unknown>;

/** Why a message is given up on; handed to `onPoison` before the message is termed. */
export interface PoisonInfo {
  stream: string;
  consumer: string;
  subject: string;
  streamSeq: number;
  msgId: string | undefined;
  deliveryCount: number;
  headers: Record<string, string>;
  /** `parse`: payload is not JSON; `handler`: the handler threw a `retry: 'never'` error or a zod error;
   *  `max_deliver`: a retryable failure on the consumer's last allowed delivery. */
  reason: 'parse' | 'handler' | 'max_deliver';
  error: unknown;
  errorMessage: string;
  /** The parsed payload when it parsed, else the raw text (first 64 KiB). */
  payload: unknown;
}

/** What settling a delivery needs from its consume loop. */
export interface Settling {
  stream: string;
  consumer: string;
  handler: MessageHandler;
  onPoison: (info: PoisonInfo) => Promise<void>;
  onError: (error: unknown, what: string) => void;
  retryDelay: (deliveryCount: number, retry: Exclude<Retry, 'never'>) => number;
  /** How often the handler's message is told it is still being worked on, ms. */
  heartbeatMs: number;
  /** The consumer's max_deliver (≤ 0: unbounded). */
  maxDeliver: number;
  maxUntypedDeliveries: number;
}

const RAW_LIMIT = 64 * 1024;
const decoder = new TextDecoder();

export function defaultRetryDelay(deliveryCount: number, retry: Exclude<Retry, 'never'>): number {
  const n = Math.max(0, deliveryCount - 1);
  const [base, cap] = retry === 'now' ? [20, 1_000] : [200, 30_000];
  const delay = Math.min(cap, base * 2 ** Math.min(n, 20));
  // ±20 % jitter so workers that failed together do not retry in lockstep.
  return Math.round(delay * (0.8 + Math.random() * 0.4));
}

export function headersToRecord(h: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  for (const key of h.keys()) out[key] = h.get(key);
  return out;
}

/**
 * Runs the handler for one delivery and settles it: ack once the handler resolved (its transaction
 * committed); nak with a growing delay (or the failure's own `retryAfterMs`) when it failed retryably;
 * record via `onPoison` and term when it can never succeed (not JSON, a `retry: 'never'` error, the
 * last allowed delivery). `deliveryCount` is the delivery as the handler sees it (deferrals left out).
 */
export async function settle(msg: JsMsg, deliveryCount: number, settling: Settling): Promise<void> {
  const { stream, consumer, handler, onPoison, onError, retryDelay, heartbeatMs, maxDeliver, maxUntypedDeliveries } =
    settling;
  const headers = headersToRecord(msg.headers);
  const deliveredTimes = msg.info.deliveryCount;
  const base = {
    stream,
    consumer,
    subject: msg.subject,
    streamSeq: msg.info.streamSequence,
    msgId: headers[HEADERS.msgId],
    deliveryCount,
    headers,
  };
  const poison = async (reason: PoisonInfo['reason'], error: unknown, payload: unknown): Promise<void> => {
    try {
      await onPoison({
        ...base,
        reason,
        error,
        errorMessage: error instanceof Error ? error.message : String(error),
        payload,
      });
    } catch (recordError) {
      onError(recordError, `onPoison failed for seq ${base.streamSeq}; nak instead of term so the failure is not lost`);
      msg.nak(retryDelay(deliveryCount, 'later'));
      return;
    }
    msg.term();
  };

  const text = decoder.decode(msg.data);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return poison('parse', error, text.slice(0, RAW_LIMIT));
  }

  // working() publishes on the connection; once it is closed that throws, and a throw inside a
  // timer would crash the process. A missed heartbeat only risks a redelivery the inbox absorbs.
  const working = () => {
    try {
      msg.working();
    } catch (error) {
      onError(error, `working() for seq ${base.streamSeq} failed`);
    }
  };
  const heartbeat = setInterval(working, heartbeatMs);
  let outcome: { ok: true } | { ok: false; error: unknown };
  try {
    await handler({ ...base, data, redeliveryCount: deliveryCount - 1, working });
    outcome = { ok: true };
  } catch (error) {
    outcome = { ok: false, error };
  } finally {
    clearInterval(heartbeat);
  }

  if (outcome.ok) {
    try {
      // A plain ack, not a confirmed one: the state change is committed, so an ack lost on the wire
      // only means a redelivery, which every handler absorbs (inbox table, effect ledger, message ids).
      // Waiting for the server's confirmation cost a round trip per message for nothing more.
      msg.ack();
    } catch (error) {
      onError(error, `ack of seq ${base.streamSeq} failed; it will be redelivered`);
    }
    return;
  }
  const retry = retryDecision(outcome.error, deliveryCount, maxUntypedDeliveries);
  if (retry === 'never') return poison('handler', outcome.error, data);
  if (maxDeliver > 0 && deliveredTimes >= maxDeliver) {
    // JetStream would silently stop delivering it: record the failure and remove it instead.
    return poison('max_deliver', outcome.error, data);
  }
  // A failure that knows when a new try can succeed (e.g. a lease that runs out then) says so.
  const after = (outcome.error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  msg.nak(typeof after === 'number' && after >= 0 ? after : retryDelay(deliveryCount, retry));
}
