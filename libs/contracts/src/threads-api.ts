import { z } from 'zod';
import { Failure } from './messages';
import { IsoTime, RunId, SubjectToken, ThreadId } from './ids';
import { ThreadEventSchema } from './thread-events';
import { ThreadsUsageRequest, UsageReport } from './usage-api';

/*
 * Queries over threads, runs and events, and the erasure of a thread, by NATS request/reply on
 * `<prefix>.threads.<tenant>.<op>`, answered by the orchestrator (which owns that data). The tenant is
 * the subject token (bound by NATS permissions), never a body field. Another tenant's thread or run
 * answers `not_found` exactly like one that does not exist: ids are names, not capabilities.
 */

export const THREADS_OPS = ['get', 'list', 'events', 'run', 'erase', 'runs', 'admission', 'usage'] as const;
export const ThreadsOp = z.enum(THREADS_OPS);
export type ThreadsOp = z.infer<typeof ThreadsOp>;

export const ThreadStatus = z.enum(['idle', 'running', 'queued']).describe('Whether the thread has an active run');
export const RunStatus = z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']);
export type RunStatus = z.infer<typeof RunStatus>;

/**
 * What a running run waits for: a human's decision on an approval, the outside world's completion of a
 * waitpoint, or an operator's decision on an uncertain effect; what a queued run waits for: admission,
 * when the tenant had as many runs in flight as its bound (TENANT_RUNS_OVER_BOUND=queue).
 */
export const RunWaiting = z
  .object({
    on: z
      .enum(['approval', 'waitpoint', 'operator', 'admission'])
      .describe(
        'approval: a human decides a call; waitpoint: the outside world completes a job a call started; operator: an uncertain effect; admission (a queued run): the tenant had as many runs in flight as its bound, it starts when one ends',
      ),
    since: IsoTime.describe("When the wait began (its time does not count against the run's working time)"),
    until: IsoTime.optional().describe(
      "When the wait expires (an approval's or a waitpoint's expiry); absent: no expiry of its own",
    ),
    for: z
      .string()
      .optional()
      .describe(
        'For admission: the bound it waits for, e.g. "concurrency key customer=42 at its max of 5 runs in flight"',
      ),
  })
  .describe('RunWaiting');
export type RunWaiting = z.infer<typeof RunWaiting>;

/** A run search's filter on waits: runs waiting for an approval, a waitpoint, an operator, or any of them. */
export const RunWaitingFilter = z
  .enum(['approval', 'waitpoint', 'operator', 'any'])
  .describe('Runs that wait for this (any: for any named wait)');

export const RunView = z
  .object({
    runId: RunId,
    threadId: ThreadId,
    requestId: z.string(),
    agent: z.string(),
    agentVersion: z.number().int(),
    principalId: z.string(),
    status: RunStatus,
    steps: z.number().int().nonnegative(),
    startedAt: IsoTime.nullable(),
    endedAt: IsoTime.nullable(),
    /** Present while the run waits for a human: its status stays `running` (its thread is busy). */
    waiting: RunWaiting.optional(),
    queuedUntil: IsoTime.optional().describe(
      'While queued: past this time it does not start and fails as run.queue_expired (its queued TTL)',
    ),
    priority: z
      .number()
      .int()
      .optional()
      .describe('While queued: its priority in the admission queue, in seconds (absent: 0)'),
    /** Present once the run ended: what its terminal event said. */
    outcome: z
      .object({
        status: z.enum(['completed', 'failed', 'cancelled']),
        output: z.string().optional(),
        error: Failure.optional(),
        version: z.number().int().positive().describe('Version of the terminal event in the thread log'),
      })
      .optional(),
  })
  .describe('RunView');
export type RunView = z.infer<typeof RunView>;

export const ThreadView = z
  .object({
    threadId: ThreadId,
    status: ThreadStatus,
    agent: z.string().nullable().describe('Agent of the active run'),
    activeRunId: RunId.nullable(),
    version: z.number().int().nonnegative().describe('Version of the last event the projection reflects'),
    createdAt: IsoTime,
    updatedAt: IsoTime,
    runs: z.array(RunView).describe('Oldest request first (at most the last 100)'),
  })
  .describe('ThreadView');
export type ThreadView = z.infer<typeof ThreadView>;

export const ThreadSummary = ThreadView.omit({ runs: true })
  .extend({ runCount: z.number().int().nonnegative() })
  .describe('ThreadSummary');
export type ThreadSummary = z.infer<typeof ThreadSummary>;

export const ThreadsGetRequest = z.strictObject({ threadId: ThreadId }).describe('ThreadsGetRequest');
export const ThreadsListRequest = z
  .strictObject({
    status: ThreadStatus.optional(),
    agent: z.string().min(1).max(128).optional().describe('Threads with a run of this agent'),
    limit: z.number().int().min(1).max(200).default(50),
    cursor: z.string().min(1).max(512).optional().describe('nextCursor of the previous page'),
  })
  .describe('ThreadsListRequest');
export const ThreadsEventsRequest = z
  .strictObject({
    threadId: ThreadId,
    after: z.number().int().nonnegative().default(0).describe('Only events with a higher version'),
    limit: z.number().int().min(1).max(1000).default(100),
  })
  .describe('ThreadsEventsRequest');
export const ThreadsRunRequest = z.strictObject({ runId: RunId }).describe('ThreadsRunRequest');
export const ThreadsEraseRequest = z
  .strictObject({
    threadId: ThreadId,
    by: z.string().min(1).max(256).describe('The principal erasing it (kept in the tombstone)'),
  })
  .describe('ThreadsEraseRequest');
/** A search over the tenant's runs, newest first (queued runs, not started yet, before all others). */
export const ThreadsRunsRequest = z
  .strictObject({
    status: RunStatus.optional(),
    waiting: RunWaitingFilter.optional(),
    agent: z.string().min(1).max(128).optional(),
    threadId: ThreadId.optional(),
    since: IsoTime.optional().describe('Runs started at or after this time'),
    until: IsoTime.optional().describe('Runs started before this time'),
    metadata: z
      .record(z.string().min(1).max(128), z.string().max(1024))
      .optional()
      .describe('Runs whose request metadata holds every one of these pairs'),
    limit: z.number().int().min(1).max(200).default(50),
    cursor: z.string().min(1).max(512).optional().describe('nextCursor of the previous page'),
  })
  .describe('ThreadsRunsRequest');
/**
 * Whether the tenant has room for the run a request would start, under the bound on its runs in flight
 * (the gateway asks before it puts a request on the bus). A request whose run exists always has room.
 */
export const ThreadsAdmissionRequest = z
  .strictObject({ requestId: z.string().min(1).max(256) })
  .describe('ThreadsAdmissionRequest');
export const RunSummary = RunView.omit({ outcome: true }).describe('RunSummary');
export type RunSummary = z.infer<typeof RunSummary>;

export const THREADS_ERROR_CODES = ['not_found', 'invalid', 'unavailable', 'conflict'] as const;
export const ThreadsError = z.object({
  code: z.enum(THREADS_ERROR_CODES),
  message: z.string(),
  problems: z.array(z.string()).optional(),
});
export type ThreadsError = z.infer<typeof ThreadsError>;
const ThreadsFailureReply = z.object({ ok: z.literal(false), error: ThreadsError });

function reply<S extends z.ZodRawShape>(name: string, shape: S) {
  return z.discriminatedUnion('ok', [z.object({ ok: z.literal(true), ...shape }), ThreadsFailureReply]).describe(name);
}

export const ThreadsGetReply = reply('ThreadsGetReply', { thread: ThreadView });
export const ThreadsListReply = reply('ThreadsListReply', {
  threads: z.array(ThreadSummary),
  nextCursor: z.string().optional().describe('Absent on the last page'),
});
export const ThreadsEventsReply = reply('ThreadsEventsReply', {
  events: z.array(ThreadEventSchema),
  /** The thread's last version when the page was read; `hasMore` when the page stopped before it. */
  lastVersion: z.number().int().nonnegative(),
  hasMore: z.boolean(),
});
export const ThreadsRunReply = reply('ThreadsRunReply', { run: RunView });
export const ThreadsEraseReply = reply('ThreadsEraseReply', {
  /** false: erased before (its tombstone answers); what the stream still held is purged again. */
  erased: z.boolean(),
  removed: z.record(z.string(), z.number().int().nonnegative()).describe('Rows and messages removed, per store'),
});
export const ThreadsRunsReply = reply('ThreadsRunsReply', {
  runs: z.array(RunSummary),
  nextCursor: z.string().optional().describe('Absent on the last page'),
});

export const ThreadsAdmissionReply = reply('ThreadsAdmissionReply', {
  /** The most runs the tenant may have in flight (`TENANT_MAX_ACTIVE_RUNS`); 0: no bound. */
  limit: z.number().int().nonnegative(),
  /** The tenant's runs in flight now (queued, or running and not waiting), counted up to `limit` (0 when there is no bound). */
  activeRuns: z.number().int().nonnegative(),
  /** The most runs the tenant may have waiting for a human (`TENANT_MAX_WAITING_RUNS`); 0: no bound. Absent from older orchestrators. */
  waitingLimit: z.number().int().nonnegative().optional(),
  /** The tenant's runs waiting for a human now, counted up to `waitingLimit`. */
  waitingRuns: z.number().int().nonnegative().optional(),
  /** The request already started a run (a resend): it is answered with that run, never refused for room. */
  known: z.boolean(),
  /**
   * What a request past `limit` gets (`TENANT_RUNS_OVER_BOUND`): `queue` — it is accepted and waits for
   * admission, so the gateway does not refuse it. Absent from older orchestrators: refuse.
   */
  overBound: z.enum(['refuse', 'queue']).optional(),
});

export const ThreadsUsageReply = reply('ThreadsUsageReply', { usage: UsageReport });

export const THREADS_CONTRACTS = {
  get: { request: ThreadsGetRequest, reply: ThreadsGetReply },
  list: { request: ThreadsListRequest, reply: ThreadsListReply },
  events: { request: ThreadsEventsRequest, reply: ThreadsEventsReply },
  run: { request: ThreadsRunRequest, reply: ThreadsRunReply },
  erase: { request: ThreadsEraseRequest, reply: ThreadsEraseReply },
  runs: { request: ThreadsRunsRequest, reply: ThreadsRunsReply },
  admission: { request: ThreadsAdmissionRequest, reply: ThreadsAdmissionReply },
  usage: { request: ThreadsUsageRequest, reply: ThreadsUsageReply },
} as const satisfies Record<ThreadsOp, { request: z.ZodType; reply: z.ZodType }>;

export type ThreadsRequest<O extends ThreadsOp> = z.output<(typeof THREADS_CONTRACTS)[O]['request']>;
export type ThreadsRequestInput<O extends ThreadsOp> = z.input<(typeof THREADS_CONTRACTS)[O]['request']>;
export type ThreadsReply<O extends ThreadsOp> = z.output<(typeof THREADS_CONTRACTS)[O]['reply']>;

/** `<prefix>.threads.<tenant>.<op>` */
export function threadsSubject(prefix: string, tenant: string, op: ThreadsOp): string {
  if (!SubjectToken.safeParse(tenant).success)
    throw new Error(`invalid tenant for a subject: ${JSON.stringify(tenant)}`);
  return `${prefix}.threads.${tenant}.${op}`;
}

/** What the orchestrator subscribes to (one queue group across instances). */
export function threadsSubjectPattern(prefix: string): string {
  return `${prefix}.threads.*.*`;
}

/** Tenant and op of a threads subject; undefined when either token is not valid. */
export function parseThreadsSubject(prefix: string, subject: string): { tenant: string; op: ThreadsOp } | undefined {
  const head = `${prefix}.threads.`;
  if (!subject.startsWith(head)) return undefined;
  const [tenant, op, ...rest] = subject.slice(head.length).split('.');
  if (rest.length > 0 || !SubjectToken.safeParse(tenant).success) return undefined;
  const parsedOp = ThreadsOp.safeParse(op);
  return parsedOp.success && tenant ? { tenant, op: parsedOp.data } : undefined;
}
