import { createInbox, type NatsConnection } from 'nats';
import {
  decodeThreadEvent,
  RunOutcome,
  RunRequest,
  runIdFor,
  subjects,
  TERMINAL_RUN_EVENTS,
  threadIdFor,
  type RunRequestInput,
  type Subjects,
  type ThreadEvent,
} from '@ratchet/contracts';

export interface RatchetClientOptions {
  /** The tenant your NATS user may publish for (`<prefix>.requests.<tenant>`). */
  tenant: string;
  /** Subject prefix of the Ratchet installation. Default `ratchet`. */
  prefix?: string;
  /** Stream-name prefix (default: the subject prefix upper-cased), for following thread events. */
  streamPrefix?: string;
}

export interface StartedRun {
  requestId: string;
  runId: string;
  threadId: string;
}

export class RunTimeoutError extends Error {
  readonly code = 'run.timeout';
  constructor(
    readonly runId: string,
    timeoutMs: number,
  ) {
    super(`run ${runId} did not end within ${timeoutMs} ms (it may still be running)`);
    this.name = 'RunTimeoutError';
  }
}

/**
 * A small typed client for services that start runs by publishing events. It needs nothing of
 * Ratchet's but the contract: a NATS connection with JetStream, the tenant and the prefix.
 *
 * @example
 * const client = new RatchetClient(nc, { tenant: 'acme' });
 * const outcome = await client.run({ requestId: 'order-42', agent: 'demo', input: [{ role: 'user', content: 'Hi' }],
 *   principal: { id: 'svc:orders', roles: ['runner'] } }, { timeoutMs: 60_000 });
 */
export class RatchetClient {
  private readonly subjects: Subjects;
  private readonly streamPrefix: string;

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: RatchetClientOptions,
  ) {
    this.subjects = subjects(options.prefix ?? 'ratchet');
    this.streamPrefix = options.streamPrefix ?? (options.prefix ?? 'ratchet').toUpperCase();
  }

  /**
   * Publishes a run request (validated first) and returns the ids it will have. Safe to call again
   * with the same requestId: at most one run starts, however often and late it is sent.
   */
  async start(request: RunRequestInput): Promise<StartedRun> {
    const body = RunRequest.parse(request);
    await this.nc.jetstream().publish(this.subjects.requests(this.options.tenant), JSON.stringify(body), {
      msgID: `${this.options.tenant}:${body.requestId}`,
    });
    return this.idsOf(body.requestId, body.threadId);
  }

  /** Starts a run and waits for its terminal outcome (sent to a private reply subject). */
  async run(request: RunRequestInput, options: { timeoutMs?: number } = {}): Promise<RunOutcome> {
    const timeoutMs = options.timeoutMs ?? 120_000;
    const inbox = createInbox();
    const sub = this.nc.subscribe(inbox, { max: 1, timeout: timeoutMs });
    const started = await this.start({ ...request, replyTo: inbox });
    try {
      for await (const m of sub) return RunOutcome.parse(m.json());
    } catch (error) {
      if ((error as { code?: string }).code === 'TIMEOUT') throw new RunTimeoutError(started.runId, timeoutMs);
      throw error;
    }
    throw new RunTimeoutError(started.runId, timeoutMs);
  }

  /**
   * Every event of a thread from `fromVersion` (default 1), live, in order, without duplicates, until
   * the run `untilRunEnds` ends (or forever without it). Reads the EVENTS stream of the installation.
   */
  async *events(
    threadId: string,
    options: { fromVersion?: number; untilRunEnds?: string; idleTimeoutMs?: number } = {},
  ): AsyncGenerator<ThreadEvent> {
    const js = this.nc.jetstream();
    // An ordered consumer starts at the stream's first message by default. One subject as a string:
    // an array becomes `filter_subjects`, which nats-server before 2.10 ignores; and an explicit
    // deliver_policy 'all' is sent with a start sequence that such servers refuse.
    const consumer = await js.consumers.get(`${this.streamPrefix}_EVENTS`, {
      filterSubjects: this.subjects.events(this.options.tenant, threadId),
    });
    const messages = await consumer.consume();
    let next = options.fromVersion ?? 1;
    try {
      for await (const m of messages) {
        const event = decodeThreadEvent(m.json());
        if (event.version < next) continue; // the feed is at-least-once: skip what was seen
        next = event.version + 1;
        yield event;
        if (
          options.untilRunEnds &&
          event.runId === options.untilRunEnds &&
          (TERMINAL_RUN_EVENTS as readonly string[]).includes(event.type)
        )
          return;
      }
    } finally {
      await messages.close();
    }
  }

  idsOf(requestId: string, threadId?: string): StartedRun {
    return {
      requestId,
      runId: runIdFor(this.options.tenant, requestId),
      threadId: threadId ?? threadIdFor(this.options.tenant, requestId),
    };
  }
}
