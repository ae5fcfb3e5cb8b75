import { performance } from 'node:perf_hooks';
import { millis, type ConsumerMessages, type JetStreamClient, type JsMsg } from 'nats';
import type { Retry } from '@ratchet/domain';
import { DEFAULT_MAX_UNTYPED_DELIVERIES } from './failure-classification';
import {
  admit,
  deferDelayMs,
  drainHeld,
  fairShareLimits,
  finished,
  heldCount,
  hold,
  initialFairShares,
  nextToRun,
  started,
} from './fair-shares';
import { defaultRetryDelay, settle, type MessageHandler, type PoisonInfo, type Settling } from './jetstream.settle';

export interface ConsumeOptions {
  js: JetStreamClient;
  stream: string;
  consumer: string;
  handler: MessageHandler;
  /**
   * Records the failure durably (a failure event, a dead-letter row). Called once per poison
   * message before `term()`; if it throws the message is nak'ed instead so the failure is not lost.
   */
  onPoison: (info: PoisonInfo) => Promise<void>;
  /** Handlers running at once (and so messages pulled at once). Default 8. */
  maxMessages?: number;
  /** Nak delay for a retryable failure, ms. Default: 200·2^(n−1) capped at 30 s for `later`, 20·2^(n−1) capped at 1 s for `now`. */
  retryDelay?: (deliveryCount: number, retry: Exclude<Retry, 'never'>) => number;
  /**
   * Deliveries a failure of no known kind (not a RatchetError, not a dependency's failure) gets before
   * the message is recorded and termed. Default 8 (about 25 s of backoff); typed transient errors and
   * dependency failures keep the consumer's `max_deliver`.
   */
  maxUntypedDeliveries?: number;
  /** How long one pull request waits for messages, ms (≥ 1000). Default 5000: bounds how stale a pull is. */
  pullExpiresMs?: number;
  /** Problems the loop handles itself (pull errors, failed acks): for logs. Default console.warn. */
  onError?: (error: unknown, what: string) => void;
  /**
   * Shares the handler slots fairly between the keys of the messages (e.g. the tenant in the subject):
   * see `fair-shares.ts`. Without it, messages run first come, first served.
   */
  fairShares?: FairShareOptions;
}

export interface FairShareOptions {
  /** The key a message counts against, from its subject (undefined: a shared key of its own). */
  keyOf: (subject: string) => string | undefined;
  /** Handlers of one key at once. Default: half of `maxMessages`. */
  perKeyInFlight?: number;
  /** Messages of one key waiting for a slot before more are deferred. Default: 4 × perKeyInFlight, at least 32. */
  perKeyHeld?: number;
  /** Messages of all keys waiting (keep it below the consumer's max_ack_pending). Default: 4 × maxMessages, at least 64. */
  maxHeld?: number;
}

export interface ConsumerHandle {
  readonly stream: string;
  readonly consumer: string;
  /** Handlers running now. */
  readonly inFlight: number;
  /** Messages pulled and waiting for their key's share (fair shares only). */
  readonly held: number;
  /**
   * Stops pulling, naks (for immediate redelivery elsewhere) whatever arrives from now on, and waits
   * up to `timeoutMs` (default 30 s) for running handlers to finish and ack. Resolves false on timeout:
   * those handlers keep running, and their messages are redelivered if they never ack.
   */
  stop(timeoutMs?: number): Promise<boolean>;
}

/**
 * Pulls from a durable consumer and runs `handler` for each message, at most `maxMessages` at once.
 * Ack only after the handler resolved (its transaction committed); nak with a growing delay when it
 * failed retryably; record and term when it can never succeed. Fetch-based: it only asks the server
 * for as many messages as it has free handler slots, so no message waits in a client buffer while
 * its ack-wait runs out. With `fairShares`, a message whose key is at its share waits in the loop (its
 * ack wait kept alive) or is deferred, and the loop keeps pulling, so other keys' messages behind a
 * flood are reached and run (ADR 0033).
 */
export async function consume(opts: ConsumeOptions): Promise<ConsumerHandle> {
  const { js, stream, handler, onPoison } = opts;
  const consumerName = opts.consumer;
  const max = Math.max(1, opts.maxMessages ?? 8);
  const retryDelay = opts.retryDelay ?? defaultRetryDelay;
  const expires = Math.max(1000, opts.pullExpiresMs ?? 5000);
  const onError =
    opts.onError ??
    ((error: unknown, what: string) => console.warn(`[jetstream ${stream}/${consumerName}] ${what}:`, error));

  const consumer = await js.consumers.get(stream, consumerName).catch((error: unknown) => {
    throw new Error(
      `consumer ${consumerName} on stream ${stream} is not available (${(error as Error).message}); was ensureTopology run?`,
      { cause: error },
    );
  });
  const info = await consumer.info(true);
  // With a backoff list each redelivery has its own ack wait; heartbeat against the shortest.
  const ackWaitMs = Math.min(
    millis(info.config.ack_wait ?? 30_000_000_000),
    ...(info.config.backoff ?? []).map((n) => millis(n)),
  );
  const heartbeatMs = Math.max(100, Math.floor(ackWaitMs / 3));
  const maxDeliver = info.config.max_deliver ?? -1;

  let stopping = false;
  let signalStop!: () => void;
  const stopped = new Promise<void>((resolve) => (signalStop = resolve));
  const fair = opts.fairShares;
  const shares = initialFairShares<JsMsg>(
    fair
      ? fairShareLimits(max, fair.perKeyInFlight, { perKey: fair.perKeyHeld, total: fair.maxHeld })
      : fairShareLimits(max, max, { perKey: 1, total: 1 }),
  );
  const keyOf = (msg: JsMsg): string => fair?.keyOf(msg.subject) ?? '';
  // Deferrals this process made, by stream sequence: a deferral is not a failed delivery, so the
  // handler and the failure budget see the deliveries without them (a redelivery elsewhere cannot know).
  const deferrals = new Map<number, number>();
  let heldBeat: NodeJS.Timeout | undefined;
  let meanHandlerMs = 10; // moving average, for how long a deferred message stays away
  let current: ConsumerMessages | undefined;
  const idle = new Set<() => void>(); // waiters for a free slot / all slots free / stop
  const wake = () => {
    for (const w of [...idle]) w();
  };
  const waitUntil = (ready: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      if (ready()) return resolve();
      const check = () => {
        if (ready()) {
          idle.delete(check);
          resolve();
        }
      };
      idle.add(check);
    });

  const settling: Settling = {
    stream,
    consumer: consumerName,
    handler,
    onPoison,
    onError,
    retryDelay,
    heartbeatMs,
    maxDeliver,
    maxUntypedDeliveries: opts.maxUntypedDeliveries ?? DEFAULT_MAX_UNTYPED_DELIVERIES,
  };
  const handle = (msg: JsMsg): Promise<void> => {
    const seq = msg.info.streamSequence;
    const deliveryCount = Math.max(1, msg.info.deliveryCount - (deferrals.get(seq) ?? 0));
    deferrals.delete(seq);
    return settle(msg, deliveryCount, settling);
  };

  const dispatch = (msg: JsMsg, key: string) => {
    started(shares, key);
    const began = performance.now();
    handle(msg)
      .catch((error) => onError(error, `settling seq ${msg.seq}`))
      .finally(() => {
        meanHandlerMs += (performance.now() - began - meanHandlerMs) / 16;
        finished(shares, key);
        // Stopping: what waits is handed back by stop(), not started.
        while (!stopping) {
          const next = nextToRun(shares);
          if (!next) break;
          dispatch(next.item, next.key);
        }
        beatHeld();
        wake();
      });
  };

  // Held messages are the loop's until they run: keep their ack wait from running out meanwhile.
  const beatHeld = () => {
    const waiting = heldCount(shares) > 0;
    if (waiting && !heldBeat) {
      heldBeat = setInterval(() => {
        for (const line of shares.held.values())
          for (const m of line) {
            try {
              m.working();
            } catch (error) {
              onError(error, `working() for held seq ${m.seq} failed`);
            }
          }
      }, heartbeatMs);
    } else if (!waiting && heldBeat) {
      clearInterval(heldBeat);
      heldBeat = undefined;
    }
  };

  const offer = (msg: JsMsg) => {
    const key = keyOf(msg);
    const admission = admit(shares, key, { deliveryCount: msg.info.deliveryCount, maxDeliver });
    switch (admission) {
      case 'run':
        return dispatch(msg, key);
      case 'hold':
        hold(shares, key, msg);
        return beatHeld();
      case 'defer': {
        const seq = msg.info.streamSequence;
        const before = deferrals.get(seq) ?? 0;
        // Bounded: a process that never sees the message again forgets the oldest first.
        if (deferrals.size >= 10_000) deferrals.delete(deferrals.keys().next().value!);
        deferrals.set(seq, before + 1);
        return msg.nak(deferDelayMs(shares, key, before, meanHandlerMs));
      }
      default: {
        const _exhaustive: never = admission;
        return _exhaustive;
      }
    }
  };

  const loop = (async () => {
    let failures = 0;
    while (!stopping) {
      // With fair shares it pulls on while every slot is taken, as long as there is room to hold: the
      // messages of another key behind a flood must be in a line when the next slot frees.
      await waitUntil(
        () => stopping || shares.inFlight < max || (fair !== undefined && heldCount(shares) < shares.limits.maxHeld),
      );
      if (stopping) break;
      try {
        // With fair shares, a whole window each time: what cannot run yet waits or is deferred, and the
        // pull reaches other keys' messages behind a flood sooner.
        const batch = await consumer.fetch({ max_messages: fair ? max : max - shares.inFlight, expires });
        current = batch;
        if (stopping) await batch.close();
        for await (const msg of batch) {
          // Pulled after stop(): hand it straight back so another instance takes it without waiting for ack_wait.
          if (stopping) msg.nak();
          else offer(msg);
        }
        failures = 0;
      } catch (error) {
        if (stopping) break;
        failures++;
        onError(error, 'pull failed; retrying');
        const pause = Math.min(10_000, 250 * 2 ** Math.min(failures, 6));
        await Promise.race([sleep(pause), stopped]);
      } finally {
        current = undefined;
      }
    }
  })();

  return {
    stream,
    consumer: consumerName,
    get inFlight() {
      return shares.inFlight;
    },
    get held() {
      return heldCount(shares);
    },
    async stop(timeoutMs = 30_000): Promise<boolean> {
      stopping = true;
      signalStop();
      wake();
      await current?.close().catch(() => undefined);
      await loop;
      // Not started here: another instance takes them at once.
      for (const m of drainHeld(shares)) m.nak();
      beatHeld();
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        waitUntil(() => shares.inFlight === 0).then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      return finished;
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
}
