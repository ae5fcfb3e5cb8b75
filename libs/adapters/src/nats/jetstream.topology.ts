import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  ErrorCode,
  nanos,
  ReplayPolicy,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type ConsumerInfo,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from 'nats';
import { subjects } from '@ratchet/contracts';

/**
 * Streams and consumers as code. Names and the subject prefix are configuration so tests and
 * environments can share one server (JetStream refuses two streams with overlapping subjects).
 *
 * Retention of the REQUESTS, INBOX and COMMANDS streams — work-queue by default, and why:
 * each message on them is a to-do item for exactly one consumer group. WorkQueue retention keeps a
 * message until that consumer acks (or terms) it and then deletes it, so the streams hold exactly the
 * backlog: no `max_age` after which an unprocessed command silently disappears (a limits stream
 * would need one to stay bounded, and an outage longer than it would lose work the outbox already
 * marked sent), and no unbounded growth. The price: a subject may be bound to only one consumer
 * (the COMMANDS consumers filter `cmd.model.>`, `cmd.tool.>`, `cmd.control.>`, `cmd.approval.>` and `cmd.webhook.>`, which do not overlap), an
 * ad-hoc second consumer for debugging is refused, and retention cannot be changed in place. The
 * executor's run-stop notices (`cmd.control.>`) have their own consumer, so a stop is never queued
 * behind the calls it stops. Taps,
 * tails and replays read the EVENTS stream (limits retention) or Postgres, never the work streams.
 * `workRetention: 'limits'` (with `workMaxAgeMs`) is there for environments that prefer to keep
 * a window of processed commands on the bus.
 */
export interface TopologyConfig {
  /** Subject prefix, e.g. `ratchet` → `ratchet.requests.>`. */
  subjectPrefix: string;
  /** Stream-name prefix, e.g. `RATCHET` → `RATCHET_REQUESTS`. */
  streamPrefix: string;
  /** How long the consumer waits for an ack before redelivering. Default 30 s. */
  ackWaitMs?: number;
  /** Deliveries per message before JetStream gives up on it. Default 20. */
  maxDeliver?: number;
  /**
   * Optional redelivery delays (ms) for messages whose ack wait ran out (the consumer's `backoff`).
   * Explicit naks carry their own delay. Must be shorter than `maxDeliver`; when set, the server uses
   * its first entry as the ack wait, so keep it ≥ `ackWaitMs` or long handlers must heartbeat sooner.
   */
  backoffMs?: number[];
  /** Max age of the EVENTS stream. Default 7 days. */
  eventsMaxAgeMs?: number;
  /** Retention of REQUESTS/INBOX/COMMANDS. Default `workqueue` (see above). */
  workRetention?: 'workqueue' | 'limits';
  /** Max age of REQUESTS/INBOX/COMMANDS; 0 = unlimited. Default 0; set it with `workRetention: 'limits'`. */
  workMaxAgeMs?: number;
  /** Dedup window for `Nats-Msg-Id`. Default 2 min. */
  duplicateWindowMs?: number;
  /** Max unacked messages per consumer across all its clients. Default 1000. */
  maxAckPending?: number;
  /**
   * The same for the model workers: a model call holds its message for as long as the provider takes
   * (seconds), so many more are in flight at once than on any other consumer. Default 20 000.
   */
  modelMaxAckPending?: number;
  /** `file` (default) or `memory` (tests that want speed over durability). */
  storage?: 'file' | 'memory';
  /** Replicas per stream; 1 on a single server. */
  replicas?: number;
}

export const CONSUMER_NAMES = [
  'orchestrator-requests',
  'orchestrator-inbox',
  'model-worker',
  'tool-executor',
  'tool-executor-control',
  'approvals',
  'orchestrator-webhooks',
  'orchestrator-revocations',
] as const;
export type ConsumerName = (typeof CONSUMER_NAMES)[number];

export interface StreamSpec {
  /** Role of the stream, independent of the configured prefix. */
  role: 'requests' | 'inbox' | 'commands' | 'events';
  config: Partial<StreamConfig> & Pick<StreamConfig, 'name' | 'subjects' | 'retention' | 'storage'>;
}

export interface ConsumerSpec {
  name: string;
  stream: string;
  config: Partial<ConsumerConfig> & Pick<ConsumerConfig, 'durable_name' | 'ack_policy' | 'deliver_policy'>;
}

export interface Topology {
  subjectPrefix: string;
  streamPrefix: string;
  streams: StreamSpec[];
  consumers: ConsumerSpec[];
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** A pure description of the streams and consumers for a prefix; nothing is sent to the server. */
export function declareTopology(cfg: TopologyConfig): Topology {
  const s = subjects(cfg.subjectPrefix);
  const sp = cfg.streamPrefix;
  const storage = cfg.storage === 'memory' ? StorageType.Memory : StorageType.File;
  const dupWindow = nanos(cfg.duplicateWindowMs ?? 2 * MINUTE);
  const workRetention = cfg.workRetention === 'limits' ? RetentionPolicy.Limits : RetentionPolicy.Workqueue;
  const workMaxAge = nanos(cfg.workMaxAgeMs ?? 0);
  const common = {
    storage,
    discard: DiscardPolicy.Old,
    num_replicas: cfg.replicas ?? 1,
  };
  const work = (role: 'requests' | 'inbox' | 'commands', suffix: string, subject: string): StreamSpec => ({
    role,
    config: {
      ...common,
      name: `${sp}_${suffix}`,
      subjects: [subject],
      retention: workRetention,
      max_age: workMaxAge,
      duplicate_window: dupWindow,
    },
  });
  const streams: StreamSpec[] = [
    work('requests', 'REQUESTS', s.requestsAll),
    work('inbox', 'INBOX', s.inboxAll),
    work('commands', 'COMMANDS', s.commandsAll),
    {
      role: 'events',
      config: {
        ...common,
        name: `${sp}_EVENTS`,
        subjects: [s.eventsAll, s.feedAll],
        retention: RetentionPolicy.Limits,
        max_age: nanos(cfg.eventsMaxAgeMs ?? 7 * DAY),
        duplicate_window: dupWindow,
      },
    },
  ];
  const streamName = (role: StreamSpec['role']): string => streams.find((x) => x.role === role)!.config.name;

  const backoff = cfg.backoffMs && cfg.backoffMs.length > 0 ? cfg.backoffMs.map((ms) => nanos(ms)) : undefined;
  const consumer = (name: ConsumerName, role: StreamSpec['role'], filter?: string): ConsumerSpec => ({
    name,
    stream: streamName(role),
    config: {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      replay_policy: ReplayPolicy.Instant,
      ack_wait: nanos(cfg.ackWaitMs ?? 30_000),
      max_deliver: cfg.maxDeliver ?? 20,
      max_ack_pending: name === 'model-worker' ? (cfg.modelMaxAckPending ?? 20_000) : (cfg.maxAckPending ?? 1000),
      ...(backoff ? { backoff } : {}),
      ...(filter ? { filter_subject: filter } : {}),
    },
  });
  return {
    subjectPrefix: cfg.subjectPrefix,
    streamPrefix: sp,
    streams,
    consumers: [
      consumer('orchestrator-requests', 'requests'),
      consumer('orchestrator-inbox', 'inbox'),
      consumer('model-worker', 'commands', s.modelCommandsAll),
      consumer('tool-executor', 'commands', s.toolCommandsAll),
      // Run-stop notices on a consumer of their own: never queued behind the tool calls they stop.
      consumer('tool-executor-control', 'commands', s.controlCommandsAll),
      consumer('approvals', 'commands', s.approvalCommandsAll),
      // Webhook deliveries of ended runs: the orchestrators record them, then send them over HTTP.
      consumer('orchestrator-webhooks', 'commands', s.webhookCommandsAll),
      // Revocations: the orchestrators stop the revoked principal's runs and pause its schedules.
      consumer('orchestrator-revocations', 'commands', s.revocationCommandsAll),
    ],
  };
}

export function findConsumer(topology: Topology, name: string): ConsumerSpec | undefined {
  return topology.consumers.find((c) => c.name === name);
}

export interface EnsureResult {
  streams: Record<string, 'created' | 'updated' | 'unchanged'>;
  consumers: Record<string, 'created' | 'updated' | 'unchanged'>;
}

/**
 * Creates or updates every stream and the named consumers (all when `only` is omitted) so the server
 * matches `topology`. Idempotent and safe to run from several processes at once: each step reads the
 * current config, creates what is missing, updates what differs, and on a lost race (someone created
 * it between our read and our write) reads again and retries. Streams are always all ensured since
 * publishers need them even where this process consumes nothing.
 */
export async function ensureTopology(
  jsm: JetStreamManager,
  topology: Topology,
  only?: readonly string[],
): Promise<EnsureResult> {
  const result: EnsureResult = { streams: {}, consumers: {} };
  const wanted = only ? topology.consumers.filter((c) => only.includes(c.name)) : topology.consumers;
  if (only) {
    const unknown = only.filter((n) => !topology.consumers.some((c) => c.name === n));
    if (unknown.length > 0)
      throw new Error(
        `unknown consumer(s) ${unknown.join(', ')}; topology declares ${topology.consumers.map((c) => c.name).join(', ')}`,
      );
  }
  for (const stream of topology.streams) {
    result.streams[stream.config.name] = await ensureStream(jsm, stream);
  }
  for (const consumer of wanted) {
    result.consumers[consumer.name] = await ensureConsumer(jsm, consumer);
  }
  return result;
}

/** Deletes the topology's streams (and with them their consumers). For tests and `ratchet` dev tooling. */
export async function deleteTopology(jsm: JetStreamManager, topology: Topology): Promise<void> {
  for (const stream of topology.streams) {
    try {
      await jsm.streams.delete(stream.config.name);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}

const ATTEMPTS = 5;

async function ensureStream(jsm: JetStreamManager, spec: StreamSpec): Promise<'created' | 'updated' | 'unchanged'> {
  const name = spec.config.name;
  for (let attempt = 1; ; attempt++) {
    const current = await streamInfo(jsm, name);
    try {
      if (!current) {
        await jsm.streams.add(spec.config);
        return 'created';
      }
      const immutable = (['retention', 'storage'] as const).filter((k) => current.config[k] !== spec.config[k]);
      if (immutable.length > 0) {
        throw new TopologyError(
          `stream ${name} exists with ${immutable.map((k) => `${k}=${current.config[k]}`).join(', ')} but the topology wants ` +
            `${immutable.map((k) => `${k}=${spec.config[k]}`).join(', ')}; JetStream cannot change that in place. ` +
            `Drain it and delete it by hand (nats stream rm ${name}), then restart.`,
        );
      }
      if (!differs(spec.config, current.config)) return 'unchanged';
      await jsm.streams.update(name, { ...current.config, ...spec.config });
      return 'updated';
    } catch (error) {
      if (error instanceof TopologyError || attempt >= ATTEMPTS) throw withContext(error, `ensuring stream ${name}`);
      // Probably a concurrent creator/updater won the race: read again and decide again.
      await sleep(50 * attempt);
    }
  }
}

async function ensureConsumer(jsm: JetStreamManager, spec: ConsumerSpec): Promise<'created' | 'updated' | 'unchanged'> {
  for (let attempt = 1; ; attempt++) {
    const current = await consumerInfo(jsm, spec.stream, spec.name);
    try {
      if (!current) {
        await jsm.consumers.add(spec.stream, spec.config);
        return 'created';
      }
      if (!consumerDiffers(spec.config, current.config)) return 'unchanged';
      const { durable_name: _d, ack_policy: _a, deliver_policy: _p, replay_policy: _r, ...updatable } = spec.config;
      // An option the topology stops setting (e.g. backoff removed) must be cleared, not kept.
      const cleared = current.config.backoff && !spec.config.backoff ? { backoff: [] } : {};
      await jsm.consumers.update(spec.stream, spec.name, { ...updatable, ...cleared });
      return 'updated';
    } catch (error) {
      if (attempt >= ATTEMPTS) throw withContext(error, `ensuring consumer ${spec.name} on ${spec.stream}`);
      await sleep(50 * attempt);
    }
  }
}

/** True when a key we set has a different value on the server (keys we leave to defaults are ignored). */
function differs(desired: object, actual: object): boolean {
  const a = actual as Record<string, unknown>;
  return Object.entries(desired).some(([k, v]) => v !== undefined && !sameValue(v, a[k]));
}

function consumerDiffers(desired: ConsumerSpec['config'], actual: ConsumerConfig): boolean {
  // With a backoff list the server replaces ack_wait by backoff[0]; comparing ack_wait would then
  // report a difference forever and update on every start.
  const { ack_wait, ...rest } = desired;
  if (differs(rest, actual)) return true;
  if (!desired.backoff && actual.backoff && actual.backoff.length > 0) return true;
  return desired.backoff ? false : !sameValue(ack_wait, actual.ack_wait);
}

function sameValue(x: unknown, y: unknown): boolean {
  if (Array.isArray(x) || Array.isArray(y)) {
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
    return x.every((v, i) => sameValue(v, y[i]));
  }
  return x === y;
}

async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  try {
    return await patiently(() => jsm.streams.info(name));
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw withContext(error, `reading stream ${name}`);
  }
}

/** Read attempts of a stream or consumer whose JetStream API request timed out (a cluster still electing). */
const READ_ATTEMPTS = 4;

/**
 * A read of the topology asked again when its request timed out: a JetStream cluster that is forming, or
 * whose meta leader is busy creating the streams of services starting together, answers late; a read
 * changes nothing, so asking again is safe. Any other error, or the last timeout, is thrown.
 */
async function patiently<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      const timedOut = (error as { code?: unknown } | undefined)?.code === ErrorCode.Timeout;
      if (!timedOut || attempt >= READ_ATTEMPTS) throw error;
      await sleep(250 * attempt);
    }
  }
}

async function consumerInfo(jsm: JetStreamManager, stream: string, name: string): Promise<ConsumerInfo | undefined> {
  try {
    return await patiently(() => jsm.consumers.info(stream, name));
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw withContext(error, `reading consumer ${name} on ${stream}`);
  }
}

/** JetStream API 404s: stream not found (10059), consumer not found (10014). */
function isNotFound(error: unknown): boolean {
  const api = (error as { api_error?: { code?: number; err_code?: number } } | undefined)?.api_error;
  if (api) return api.code === 404 || api.err_code === 10059 || api.err_code === 10014;
  return error instanceof Error && /not found/i.test(error.message);
}

export class TopologyError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TopologyError';
  }
}

function withContext(error: unknown, doing: string): Error {
  if (error instanceof TopologyError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new TopologyError(`${doing}: ${message}`, { cause: error });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
