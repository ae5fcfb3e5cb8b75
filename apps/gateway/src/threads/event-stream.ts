import { Inject, Injectable } from '@nestjs/common';
import {
  decodeThreadEvent,
  feedEvents,
  FeedVersionError,
  subjects,
  TokenChunk,
  type Subjects,
  type ThreadEvent,
} from '@ratchet/contracts';
import type { NatsConnection } from 'nats';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Backends } from '../backends/backends';
import type { GatewayConfig } from '../gateway.config';
import { DATABASE, GATEWAY_CONFIG, LOGGER, NATS_CONNECTION } from '../gateway.tokens';
import type { Database } from '@ratchet/adapters';
import { backendProblem } from '@ratchet/http-edge';
import type { Logger } from '../logging/logger';

/** How long a stream waits for a thread that does not exist yet (a run just accepted). */
const THREAD_APPEAR_MS = 5_000;

const PAGE = 500;
const HEARTBEAT_MS = 15_000;

/** What a stream carries: the thread's events (durable, with ids), the model's answers as written, or both. */
export interface StreamModes {
  events: boolean;
  messages: boolean;
}

/**
 * A thread's log as Server-Sent Events: the stored events after `after` (from the orchestrator), then
 * the live feed `<prefix>.events.<tenant>.<thread>`. The feed is subscribed to before the log is read,
 * events are deduplicated by version, and a version gap in the feed is filled from the log, so a
 * client that reconnects with `Last-Event-ID` (= the version it saw last) misses nothing.
 *
 * With `messages`, the model's answers as they are written come too (`event: token` with text and
 * tool-call pieces, `event: reset` when an attempt starts: drop what you had of that step), from
 * `<prefix>.tokens.<tenant>.<thread>`. They carry no id (they are not durable): the text of record is
 * the `model.responded` event that follows.
 */
@Injectable()
export class EventStreamer {
  private readonly subjects: Subjects;

  constructor(
    private readonly backends: Backends,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(DATABASE) private readonly db: Database,
  ) {
    this.subjects = subjects(config.RATCHET_SUBJECT_PREFIX);
  }

  async stream(
    tenant: string,
    threadId: string,
    after: number,
    req: IncomingMessage,
    res: ServerResponse,
    modes: StreamModes = { events: true, messages: false },
  ): Promise<void> {
    // Tokens that arrive before the stream's headers are written wait for them (they are short-lived).
    let ready = false;
    const early: string[] = [];
    const writeToken = (frame: string) => (ready ? res.write(frame) : early.push(frame));
    const tokens = modes.messages
      ? this.nc.subscribe(this.subjects.tokens(tenant, threadId), {
          callback: (error, msg) => {
            if (error) return;
            try {
              const chunk = TokenChunk.parse(msg.json());
              if (chunk.tenantId !== tenant || chunk.threadId !== threadId) return;
              const { tenantId: _t, threadId: _th, kind, ...data } = chunk;
              writeToken(`event: ${kind === 'reset' ? 'reset' : 'token'}\ndata: ${JSON.stringify(data)}\n\n`);
            } catch {
              // not a token chunk: nothing for the client
            }
          },
        })
      : undefined;
    // The decision feed (v2, ADR 0042): one message per committed decision, its events in order.
    const sub = this.nc.subscribe(this.subjects.feed(tenant, threadId));
    if (!modes.events) sub.unsubscribe();
    let last = after;
    const readStored = async (): Promise<ThreadEvent[]> => {
      const out: ThreadEvent[] = [];
      for (;;) {
        const page = await this.backends.threads(tenant, 'events', { threadId, after: last, limit: PAGE });
        if (!page.ok) throw backendProblem(page.error, 'thread');
        for (const event of page.events as ThreadEvent[]) {
          if (event.version <= last) continue;
          out.push(event);
          last = event.version;
        }
        if (!page.hasMore || page.events.length === 0) return out;
      }
    };

    let first: ThreadEvent[] = [];
    // A run accepted a moment ago creates its thread when the orchestrator takes the request: a client
    // that follows right after `POST /v1/runs` waits for it briefly instead of getting a 404. An id that
    // does not appear (missing, or another tenant's) still answers 404, the same way, before anything
    // is written.
    const deadline = Date.now() + THREAD_APPEAR_MS;
    for (;;) {
      try {
        first = await readStored();
        break;
      } catch (error) {
        const missing = (error as { getStatus?: () => number }).getStatus?.() === 404;
        if (!missing || Date.now() >= deadline || req.destroyed) {
          sub.unsubscribe();
          tokens?.unsubscribe();
          throw error;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }

    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    const send = (event: ThreadEvent) =>
      res.write(`id: ${event.version}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    if (modes.events) first.forEach(send);
    ready = true;
    early.splice(0).forEach((frame) => res.write(frame));

    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    const stop = () => {
      sub.unsubscribe();
      tokens?.unsubscribe();
    };
    req.on('close', stop);
    res.on('close', stop);
    if (!modes.events) {
      // Tokens only: the connection lasts until the client goes.
      await new Promise<void>((resolve) => {
        req.on('close', resolve);
        res.on('close', resolve);
      });
      clearInterval(heartbeat);
      stop();
      if (!res.writableEnded) res.end();
      return;
    }
    try {
      for await (const msg of sub) {
        let events: ThreadEvent[];
        try {
          // The feed carries content sealed as the log stores it: opened here with the thread's key.
          const raws = feedEvents(JSON.parse(new TextDecoder().decode(msg.data)), msg.subject);
          events = (await this.db.content.openEvents(raws, 'erased')).map((raw) => decodeThreadEvent(raw));
        } catch (error) {
          if (error instanceof FeedVersionError) this.logger.warn({ err: error, tenant, threadId }, error.message);
          continue;
        }
        for (const event of events) {
          if (event.tenantId !== tenant || event.threadId !== threadId || event.version <= last) continue;
          if (event.version > last + 1) {
            // A gap: the feed skipped something (or this replica subscribed mid-burst). The log has it.
            for (const stored of await readStored()) send(stored);
            if (event.version <= last) continue;
          }
          send(event);
          last = event.version;
        }
      }
    } catch (error) {
      this.logger.warn({ err: error, tenant, threadId }, 'event stream ended with an error; the client resumes');
    } finally {
      clearInterval(heartbeat);
      stop();
      if (!res.writableEnded) res.end();
    }
  }
}
