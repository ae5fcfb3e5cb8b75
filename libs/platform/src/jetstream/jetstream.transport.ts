import { Server, type CustomTransportStrategy, type MessageHandler as NestHandler } from '@nestjs/microservices';
import { context as otelContext, propagation, ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { logScope, scopeOf } from '../service/logger';
import { ATTR, inSpan, SPAN } from '../telemetry';
import { lastValueFrom } from 'rxjs';
import type { NatsConnection } from 'nats';
import {
  connectNats,
  consume,
  ensureTopology,
  findConsumer,
  type ConsumedMessage,
  type ConsumerHandle,
  type FairShareOptions,
  type PoisonInfo,
  type Topology,
} from '@ratchet/adapters';
import { subjects, type Subjects } from '@ratchet/contracts';
import type { Retry } from '@ratchet/domain';
import { JetStreamContext } from './jetstream.context';

export const JETSTREAM_TRANSPORT = Symbol.for('ratchet.jetstream');

export interface JetStreamServerOptions {
  /** Where to connect (ignored when `connection` is given). */
  url?: string;
  /** Connection name shown by the server: the service name. */
  name: string;
  /** Reuse a connection (e.g. the one the outbox publisher uses); it is then not drained by close(). */
  connection?: NatsConnection;
  topology: Topology;
  /** Create/update the streams and this service's consumers on listen. Default true. */
  ensureTopology?: boolean;
  /** Handlers running at once, per consumer (a number for all, or by consumer name). Default 8. */
  maxMessages?: number | Partial<Record<string, number>>;
  /** Fair shares of a consumer's handlers between the keys (tenants) of its messages, by consumer name. */
  fairShares?: Partial<Record<string, FairShareOptions>>;
  /** Records a message given up on (failure event, dead-letter row) before it is termed. Required: the
   *  failure must land somewhere durable, not only in a log line. */
  onPoison: (info: PoisonInfo) => Promise<void>;
  /** How long close() waits for running handlers, ms. Default 30 s (keep it below the orchestrator's kill timeout). */
  stopTimeoutMs?: number;
  retryDelay?: (deliveryCount: number, retry: Exclude<Retry, 'never'>) => number;
  pullExpiresMs?: number;
}

type Status = 'connected' | 'disconnected' | 'reconnecting';
/** `on(event, cb)` events: nats.js connection status types (`disconnect`, `reconnect`, `error`, `ldm`…) with their data. */
type StatusListener = (data: unknown) => void;
export type JetStreamServerEvents = Record<string, StatusListener>;

/**
 * Binds every `@EventPattern('<consumer name>')` handler to the durable JetStream pull consumer of that
 * name. A message is acked only after the handler's result resolved (its transaction committed); a
 * failure is nak'ed with backoff or, when it can never succeed, recorded via `onPoison` and termed.
 * Register `JetStreamExceptionFilter` globally so the handler's error type (its `retry`) survives Nest.
 */
export class JetStreamServer extends Server<JetStreamServerEvents, Status> implements CustomTransportStrategy {
  override transportId: symbol = JETSTREAM_TRANSPORT;
  private nc: NatsConnection | undefined;
  private ownsConnection = false;
  private handles: ConsumerHandle[] = [];
  private readonly listeners = new Map<string, Set<StatusListener>>();
  private closing: Promise<void> | undefined;
  private warnedLostError = false;
  private readonly subjects: Subjects;

  constructor(private readonly options: JetStreamServerOptions) {
    super();
    this.subjects = subjects(options.topology.subjectPrefix);
  }

  listen(callback: (...optionalParams: unknown[]) => unknown): void {
    this.start().then(
      () => callback(),
      (error: unknown) => callback(error),
    );
  }

  async close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  on(event: string, callback: StatusListener): void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(callback);
  }

  unwrap<T>(): T {
    if (!this.nc) throw new Error('JetStreamServer is not listening yet: call listen() (app.listen()) first');
    return this.nc as T;
  }

  private async start(): Promise<void> {
    const { topology } = this.options;
    const patterns = [...this.messageHandlers.keys()];
    const unknown = patterns.filter((p) => !findConsumer(topology, p));
    if (unknown.length > 0) {
      throw new Error(
        `@EventPattern(${unknown.map((p) => `'${p}'`).join(', ')}) names no consumer of the topology; ` +
          `known consumers: ${topology.consumers.map((c) => c.name).join(', ')}`,
      );
    }
    if (this.options.connection) {
      this.nc = this.options.connection;
    } else {
      if (!this.options.url) throw new Error('JetStreamServer needs either `url` or `connection`');
      this.nc = await connectNats({ url: this.options.url, name: this.options.name });
      this.ownsConnection = true;
    }
    this.watchStatus(this.nc);
    this._status$.next('connected');
    if (this.options.ensureTopology ?? true) {
      await ensureTopology(await this.nc.jetstreamManager(), topology, patterns);
    }
    const js = this.nc.jetstream();
    for (const pattern of patterns) {
      const spec = findConsumer(topology, pattern)!;
      const max = this.options.maxMessages;
      this.handles.push(
        await consume({
          js,
          stream: spec.stream,
          consumer: spec.name,
          handler: (message) => this.dispatch(pattern, message),
          onPoison: this.options.onPoison,
          maxMessages: typeof max === 'number' ? max : (max?.[pattern] ?? 8),
          fairShares: this.options.fairShares?.[pattern],
          retryDelay: this.options.retryDelay,
          pullExpiresMs: this.options.pullExpiresMs,
          onError: (error, what) => this.logger.warn(`${spec.stream}/${spec.name}: ${what}: ${describe(error)}`),
        }),
      );
    }
  }

  /** Runs the Nest handler for one delivery; resolves when its result (Observable/Promise/value) settled. */
  private async dispatch(pattern: string, message: ConsumedMessage): Promise<void> {
    const handler = this.getHandlerByPattern(pattern) as NestHandler | null;
    if (!handler) throw new Error(`no handler for ${pattern}`);
    const ctx = new JetStreamContext(message, this.subjects);
    // The sender's traceparent becomes the active OTel context, so the handler's spans join its trace
    // (a no-op until an OTel SDK and propagator are registered).
    const parent = propagation.extract(ROOT_CONTEXT, message.headers);
    const run = async (): Promise<void> => {
      const result$ = this.transformToObservable(await handler(message.data, ctx));
      await lastValueFrom(result$, { defaultValue: undefined });
    };
    try {
      await new Promise<void>((resolve, reject) => {
        const started = this.onProcessingStartHook(this.transportId, ctx, () => {
          // One consumer span per delivery; a redelivery is marked, so a recovery reads as one in the trace.
          const attributes = {
            [ATTR.consumer]: pattern,
            [ATTR.messagingSystem]: 'nats',
            [ATTR.messagingDestination]: message.subject,
            [ATTR.messagingMessageId]: message.msgId ?? '',
            [ATTR.redeliveries]: message.redeliveryCount,
            [ATTR.resume]: message.redeliveryCount > 0,
          };
          const work = logScope.run(scopeOf(message.data, message.headers), () =>
            otelContext.with(parent, () => inSpan(SPAN.consume(pattern), attributes, run, { kind: SpanKind.CONSUMER })),
          );
          work.then(resolve, reject);
          return work;
        });
        // A hook's own failure must not leave the delivery hanging.
        Promise.resolve(started).catch(reject);
      });
    } catch (error) {
      this.noteLostErrorType(error);
      throw error;
    } finally {
      this.onProcessingEndHook?.(this.transportId, ctx);
    }
  }

  /** Nest's default filter turns errors into `{ status, message }`: say once how to keep their type. */
  private noteLostErrorType(error: unknown): void {
    if (this.warnedLostError || error instanceof Error) return;
    const e = error as { status?: unknown; message?: unknown } | null;
    if (e && e.status === 'error' && typeof e.message === 'string') {
      this.warnedLostError = true;
      this.logger.warn(
        'a handler error reached the JetStream transport as a plain { status, message } object: its retry ' +
          'classification is lost and it is retried as transient. Register JetStreamExceptionFilter ' +
          '(app.useGlobalFilters(new JetStreamExceptionFilter())).',
      );
    }
  }

  private async shutdown(): Promise<void> {
    const timeout = this.options.stopTimeoutMs ?? 30_000;
    const results = await Promise.all(this.handles.map((h) => h.stop(timeout)));
    results.forEach((finished, i) => {
      const h = this.handles[i];
      if (!finished && h)
        this.logger.warn(
          `${h.stream}/${h.consumer}: handlers still running after ${timeout} ms; their messages will be redelivered`,
        );
    });
    this.handles = [];
    if (this.nc && this.ownsConnection && !this.nc.isClosed()) {
      await this.nc.drain().catch((error: unknown) => this.logger.warn(`draining NATS: ${describe(error)}`));
    }
    this._status$.next('disconnected');
  }

  private watchStatus(nc: NatsConnection): void {
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') this._status$.next('disconnected');
        else if (s.type === 'reconnecting') this._status$.next('reconnecting');
        else if (s.type === 'reconnect') this._status$.next('connected');
        for (const cb of this.listeners.get(s.type) ?? []) {
          try {
            cb(s.data);
          } catch (error) {
            this.logger.warn(`listener for ${s.type} threw: ${describe(error)}`);
          }
        }
      }
    })().catch(() => undefined);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : JSON.stringify(error);
}
