import { createInbox, type NatsConnection } from 'nats';
import {
  decodeThreadEvent,
  feedEvents,
  RunOutcome,
  RunRequest,
  runIdFor,
  subjects,
  TERMINAL_RUN_EVENTS,
  threadIdFor,
  TokenChunk,
  type RunRequestInput,
  type Subjects,
  type ThreadEvent,
  withoutSealedContent,
} from '@ratchet/contracts';

export interface RatchetClientOptions {
  /** The tenant your NATS user may publish for (`<prefix>.requests.<tenant>`). */
  tenant: string;
  /** Subject prefix of the Ratchet installation. Default `ratchet`. */
  prefix?: string;
  /** Stream-name prefix (default: the subject prefix upper-cased), for following thread events. */
  streamPrefix?: string;
  /**
   * Where the installation seals content at rest (RATCHET_KEY_FILE), the EVENTS stream carries it sealed
   * (docs/security.md#content-at-rest): this opens an event as published, e.g. with the installation's
   * keys (`db.content.openEvents`). Without it, sealed content reads as `[erased]` and the shape stays.
   */
  openContent?: (event: unknown) => Promise<unknown>;
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
   * the run `untilRunEnds` ends (or forever without it). Reads the thread's decision feed (feed v2, one
   * message per committed decision) on the EVENTS stream of the installation; a message of another feed
   * version throws `FeedVersionError`.
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
      filterSubjects: this.subjects.feed(this.options.tenant, threadId),
    });
    const messages = await consumer.consume();
    let next = options.fromVersion ?? 1;
    try {
      for await (const m of messages) {
        for (const published of feedEvents(m.json(), m.subject)) {
          const open = this.options.openContent;
          const event = decodeThreadEvent(open ? await open(published) : withoutSealedContent(published));
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
      }
    } finally {
      await messages.close();
    }
  }

  /**
   * A thread live: the model's answers as they are written (`token`, and `reset` when an attempt starts)
   * together with its events (`event`, in order, from `fromVersion`), until the run `untilRunEnds` ends.
   * Tokens are not durable (core NATS): only those written after this call are seen; the events are
   * all there. Feed everything to a `StreamedAnswers` to have each step's text, ending as the log says.
   */
  async *follow(
    threadId: string,
    options: { fromVersion?: number; untilRunEnds?: string } = {},
  ): AsyncGenerator<FollowItem> {
    const queue: FollowItem[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    let failure: unknown;
    const push = (item: FollowItem) => {
      queue.push(item);
      wake?.();
    };
    const tokens = this.nc.subscribe(this.subjects.tokens(this.options.tenant, threadId), {
      callback: (error, msg) => {
        if (error) return;
        const chunk = TokenChunk.safeParse(msg.json());
        if (chunk.success) push({ type: chunk.data.kind === 'reset' ? 'reset' : 'token', chunk: chunk.data });
      },
    });
    const events = (async () => {
      for await (const event of this.events(threadId, options)) push({ type: 'event', event });
    })().then(
      () => (ended = true),
      (error: unknown) => {
        failure = error;
        ended = true;
      },
    );
    try {
      for (;;) {
        while (queue.length > 0) yield queue.shift()!;
        if (ended) break;
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), events]);
        wake = undefined;
      }
      while (queue.length > 0) yield queue.shift()!;
      if (failure) throw failure;
    } finally {
      tokens.unsubscribe();
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

/** What `follow` yields: a piece of an answer as written, the start of an attempt, or an event of the log. */
export type FollowItem =
  { type: 'token'; chunk: TokenChunk } | { type: 'reset'; chunk: TokenChunk } | { type: 'event'; event: ThreadEvent };

/**
 * Each step's answer text as it is written, by run and step: a `reset` (a new attempt) drops what the
 * step had, a token adds to it, and the step's `model.responded` event replaces it with the text of
 * record — so the text always ends exactly as the log holds it, whatever the stream missed or repeated.
 */
export class StreamedAnswers {
  private readonly texts = new Map<string, string>();
  private readonly final = new Set<string>();

  add(item: FollowItem): void {
    if (item.type === 'event') {
      const e = item.event;
      if (e.type !== 'model.responded' || !e.runId) return;
      const key = `${e.runId}/${e.data.step}`;
      this.texts.set(key, e.data.content ?? '');
      this.final.add(key);
      return;
    }
    const key = `${item.chunk.runId}/${item.chunk.step}`;
    if (this.final.has(key)) return;
    if (item.type === 'reset') this.texts.set(key, '');
    else this.texts.set(key, (this.texts.get(key) ?? '') + (item.chunk.text ?? ''));
  }

  /** The step's text so far (final once its `model.responded` arrived). */
  text(runId: string, step: number): string {
    return this.texts.get(`${runId}/${step}`) ?? '';
  }

  /** Whether the step's text is the one of record. */
  isFinal(runId: string, step: number): boolean {
    return this.final.has(`${runId}/${step}`);
  }
}
