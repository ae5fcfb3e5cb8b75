import { ThreadsEventsReply, ThreadSummary } from '@ratchet/contracts';
import { z } from 'zod';
import { backendProblem } from '../backend-errors';
import type { Backends } from '../backends/backends';
import type { EdgePrincipal } from '../route-helpers';
import { parseRequest } from '../problem-details';
import type { RunAccepted } from '../runs/run-request-mapping';
import { startRun, type RunStarts } from '../runs/runs-routes';
import {
  CreateThreadBody,
  EventsQuery,
  LastEventId,
  ListThreadsQuery,
  StreamModesQuery,
  StreamQuery,
  ThreadIdParam,
} from './threads-schemas';

export const ThreadList = z.object({ threads: z.array(ThreadSummary), nextCursor: z.string().optional() });
export const ThreadErased = z.object({
  threadId: z.string(),
  erased: z.boolean().describe('false: it was erased before; nothing more was removed but what the stream held'),
  removed: z.record(z.string(), z.number().int()).describe('Rows and stream messages removed, per store'),
});
export const EventPage = z.object({
  events: (ThreadsEventsReply.options[0] as z.ZodObject).shape['events'] as z.ZodType,
  lastVersion: z.number().int(),
  hasMore: z.boolean(),
  nextAfter: z.number().int().describe('Pass as `after` for the next page'),
});

/** Where a thread's stream starts and what it carries. */
export interface StreamTarget {
  threadId: string;
  after: number;
  modes?: { events: boolean; messages: boolean };
}

/**
 * The threads API (`/v1/threads`): start a thread with its first run, list, read, erase and page through
 * a thread's events, and where a stream of it starts (the gateway's event streamer follows it).
 */
export class ThreadsRoutes {
  constructor(
    private readonly starts: RunStarts,
    private readonly backends: Pick<Backends, 'threads'>,
  ) {}

  /** A thread comes into existence with its first run; the Idempotency-Key makes a retry answer the same one. */
  async create(
    principal: EdgePrincipal,
    rawBody: unknown,
    headers: Record<string, string | undefined>,
  ): Promise<RunAccepted> {
    const body = parseRequest(CreateThreadBody, rawBody, { in: 'body' });
    return startRun(this.starts, principal, body, headers);
  }

  async list(principal: EdgePrincipal, rawQuery: unknown) {
    const query = parseRequest(ListThreadsQuery, rawQuery, { in: 'query' });
    const reply = await this.backends.threads(principal.tenantId, 'list', query);
    if (!reply.ok) throw backendProblem(reply.error, 'thread');
    return { threads: reply.threads, ...(reply.nextCursor ? { nextCursor: reply.nextCursor } : {}) };
  }

  async get(principal: EdgePrincipal, rawParams: unknown) {
    const { threadId } = parseRequest(ThreadIdParam, rawParams, { in: 'path' });
    const reply = await this.backends.threads(principal.tenantId, 'get', { threadId });
    if (!reply.ok) throw backendProblem(reply.error, 'thread');
    return reply.thread;
  }

  /** Erases the thread from every store (409 while a run of it is going); erasing it again answers `erased: false`. */
  async remove(principal: EdgePrincipal, rawParams: unknown) {
    const { threadId } = parseRequest(ThreadIdParam, rawParams, { in: 'path' });
    const reply = await this.backends.threads(principal.tenantId, 'erase', { threadId, by: principal.principalId });
    if (!reply.ok) throw backendProblem(reply.error, 'thread');
    return { threadId, erased: reply.erased, removed: reply.removed };
  }

  async events(principal: EdgePrincipal, rawParams: unknown, rawQuery: unknown) {
    const { threadId } = parseRequest(ThreadIdParam, rawParams, { in: 'path' });
    const query = parseRequest(EventsQuery, rawQuery, { in: 'query' });
    const reply = await this.backends.threads(principal.tenantId, 'events', { threadId, ...query });
    if (!reply.ok) throw backendProblem(reply.error, 'thread');
    return {
      events: reply.events,
      lastVersion: reply.lastVersion,
      hasMore: reply.hasMore,
      nextAfter: reply.events.at(-1)?.version ?? query.after,
    };
  }

  /** `GET /v1/threads/:threadId/events/stream`: the thread's events after `Last-Event-ID` (or `after`). */
  eventStream(rawParams: unknown, rawQuery: unknown, lastEventId: string | undefined): StreamTarget {
    const { threadId } = parseRequest(ThreadIdParam, rawParams, { in: 'path' });
    const query = parseRequest(StreamQuery, rawQuery, { in: 'query' });
    return { threadId, after: resumeAfter(lastEventId, query.after) };
  }

  /** `GET /v1/threads/:threadId/stream`: the modes asked for (`messages`, `events`) from where it resumes. */
  liveStream(rawParams: unknown, rawQuery: unknown, lastEventId: string | undefined): Required<StreamTarget> {
    const { threadId } = parseRequest(ThreadIdParam, rawParams, { in: 'path' });
    const query = parseRequest(StreamModesQuery, rawQuery, { in: 'query' });
    return {
      threadId,
      after: resumeAfter(lastEventId, query.after),
      modes: { events: query.mode.includes('events'), messages: query.mode.includes('messages') },
    };
  }
}

/** Where a stream resumes: the client's `Last-Event-ID` (a reconnect) wins over `after`. */
function resumeAfter(lastEventId: string | undefined, after: number | undefined): number {
  return lastEventId !== undefined && lastEventId.trim() !== ''
    ? parseRequest(LastEventId, lastEventId.trim(), { in: 'header', name: 'Last-Event-ID' })
    : (after ?? 0);
}
