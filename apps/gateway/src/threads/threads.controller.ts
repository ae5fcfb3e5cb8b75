import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ThreadView } from '@ratchet/contracts';
import {
  ApiJsonResponse,
  ApiPathParams,
  ApiProblems,
  ApiQueryParams,
  CreateThreadBody,
  EventPage,
  EventsQuery,
  ListThreadsQuery,
  StreamModesQuery,
  StreamQuery,
  ThreadErased,
  ThreadIdParam,
  ThreadList,
  ThreadsRoutes,
  type RunAccepted,
} from '@ratchet/http-edge';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { READ_ROLES, RequireAnyRole, RequireRoles } from '../auth/roles.decorator';
import { EventStreamer } from './event-stream';
import { ThreadStream } from './thread-stream.decorator';
import { StartsRun } from '../runs/starts-run.decorator';

@ApiTags('threads')
@Controller('v1/threads')
export class ThreadsController {
  constructor(
    private readonly routes: ThreadsRoutes,
    private readonly streamer: EventStreamer,
  ) {}

  @StartsRun({
    operation: {
      summary: 'Create a thread by starting its first run',
      description:
        'A thread comes into existence with its first run. The thread id is derived from the Idempotency-Key, so a retry answers the same thread and run.',
    },
    idempotencyKey: 'Retries with the same key create one thread',
    body: ['CreateThreadBody', CreateThreadBody],
  })
  create(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Body() rawBody: unknown,
    @Headers() headers: Record<string, string | undefined>,
  ): Promise<RunAccepted> {
    return this.routes.create(principal, rawBody, headers);
  }

  @Get()
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: "List the tenant's threads, newest first" })
  @ApiQueryParams(ListThreadsQuery, {
    agent: 'Threads with a run of this agent',
    cursor: 'nextCursor of the previous page',
  })
  @ApiJsonResponse(200, 'A page of threads', 'ThreadList', ThreadList)
  list(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Query() rawQuery: unknown) {
    return this.routes.list(principal, rawQuery);
  }

  @Get(':threadId')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: "A thread's state and its runs" })
  @ApiPathParams(ThreadIdParam)
  @ApiJsonResponse(200, 'The thread', 'ThreadView', ThreadView)
  @ApiProblems({ 404: 'No such thread in your tenant' })
  get(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown) {
    return this.routes.get(principal, rawParams);
  }

  @Delete(':threadId')
  @HttpCode(200)
  @RequireRoles('admin')
  @ApiOperation({
    summary: 'Erase a thread from every store',
    description:
      'Removes the thread in one transaction from every store — its event log, snapshot, projection, conversation ' +
      'and runs, its effect-ledger rows, its approvals with their decisions and audit rows, the outbox, inbox and ' +
      'failed-message rows naming it, and the memory items its runs wrote — leaving an audit tombstone (the tenant, a ' +
      'hash of the thread id, the counts, who erased it); then purges its messages from the EVENTS stream. Refused ' +
      'with 409 while a run of it is queued or running. Idempotent: erasing it again answers 200 with `erased: false`.',
  })
  @ApiPathParams(ThreadIdParam)
  @ApiJsonResponse(200, 'Erased (or erased before: `erased` false)', 'ThreadErased', ThreadErased)
  @ApiProblems({ 404: 'No such thread in your tenant', 409: 'A run of the thread is going: nothing was removed' })
  remove(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown) {
    return this.routes.remove(principal, rawParams);
  }

  @Get(':threadId/events')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: "A page of the thread's event log, in version order" })
  @ApiPathParams(ThreadIdParam)
  @ApiQueryParams(EventsQuery, { after: 'Events with a version above this one' })
  @ApiJsonResponse(200, 'Events with a version above `after`', 'EventPage', EventPage)
  @ApiProblems({ 404: 'No such thread in your tenant' })
  events(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Query() rawQuery: unknown,
  ) {
    return this.routes.events(principal, rawParams, rawQuery);
  }

  @ThreadStream({
    path: ':threadId/events/stream',
    operation: {
      summary: "Follow the thread's events live (Server-Sent Events)",
      description:
        'Stored events after `Last-Event-ID` (or `after`), then live ones. Each message has `id` = the event version, `event` = its type and `data` = the event JSON. Reconnect with `Last-Event-ID` to resume without a gap; events are never repeated within a connection.',
    },
    query: [StreamQuery, { after: 'Events with a version above this one' }],
    stream:
      'An event stream: `id: <version>`, `event: <type>`, `data: <ThreadEvent JSON>`; `: keep-alive` comments every 15 s',
    problems: { 404: 'No such thread in your tenant' },
  })
  async stream(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Query() rawQuery: unknown,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: IncomingMessage,
    @Res() res: ServerResponse,
  ): Promise<void> {
    const { threadId, after } = this.routes.eventStream(rawParams, rawQuery, lastEventId);
    await this.streamer.stream(principal.tenantId, threadId, after, req, res);
  }

  @ThreadStream({
    path: ':threadId/stream',
    operation: {
      summary: "Follow the thread live: the model's answers as written, and its events (Server-Sent Events)",
      description:
        '`mode` (comma-separated, default `messages,events`): `events` are the stored and live events of the thread, as on `/events/stream` (`id` = version; reconnect with `Last-Event-ID`); `messages` are the answers as the model writes them: `event: token` (`text`, `toolCalls` pieces, `runId`, `step`, `attempt`, `seq`) and `event: reset` when an attempt starts (drop what you had of that step: a retry, a worker that stopped mid-answer). Tokens have no id and are not replayed; the `model.responded` event that follows holds the text of record.',
    },
    query: [
      StreamModesQuery,
      { after: 'Events with a version above this one', mode: 'Comma-separated: `messages`, `events` or both' },
    ],
    stream: 'An event stream of `token`, `reset` and thread-event messages; `: keep-alive` comments every 15 s',
    problems: { 400: 'An unknown mode', 404: 'No such thread in your tenant' },
  })
  async live(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Query() rawQuery: unknown,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: IncomingMessage,
    @Res() res: ServerResponse,
  ): Promise<void> {
    const { threadId, after, modes } = this.routes.liveStream(rawParams, rawQuery, lastEventId);
    await this.streamer.stream(principal.tenantId, threadId, after, req, res, modes);
  }
}
