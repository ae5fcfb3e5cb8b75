import { THREADS_CONTRACTS, type ThreadsOp, type ThreadsReply, type ThreadsRequest } from '@ratchet/contracts';
import {
  decodeCursor,
  decodeRunCursor,
  getRun,
  getThread,
  listThreadPage,
  readEventPage,
  runAdmissionFacts,
  searchRunPage,
  usageReport,
} from '@ratchet/adapters';
import { eraseThread, threadFeedSubjects, type ServiceRuntime } from '@ratchet/platform';

export type AnyThreadsReply = ThreadsReply<ThreadsOp>;
type AnyReply = AnyThreadsReply;

/**
 * Threads, runs and events as requests and replies (`THREADS_CONTRACTS[op]`; the gateway's read API relays
 * here). The tenant is the caller's (the subject's, bound by NATS permissions); another tenant's id
 * answers `not_found` exactly like a missing one. Read-only but for `erase` (see eraseThread), which
 * removes an idle thread from every store and leaves a tombstone, and `admission`, which counts the
 * tenant's runs in flight against `maxActiveRuns`.
 */
export class ThreadsApi {
  constructor(
    private readonly runtime: ServiceRuntime,
    private readonly admission: {
      readonly maxActiveRuns: number;
      readonly maxWaitingRuns: number;
      readonly overBound?: 'refuse' | 'queue';
    },
  ) {}

  async answer(tenant: string, op: ThreadsOp, data: Uint8Array): Promise<AnyReply> {
    let raw: unknown;
    try {
      raw = JSON.parse(new TextDecoder().decode(data));
    } catch {
      return invalid('the request is not JSON');
    }
    const parsed = THREADS_CONTRACTS[op].request.safeParse(raw);
    if (!parsed.success) {
      return invalid(
        `invalid ${op} request`,
        parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
      );
    }
    try {
      return await this.run(tenant, op, parsed.data);
    } catch (error) {
      this.runtime.logger.error({ err: error, op }, 'threads query failed');
      return { ok: false, error: { code: 'unavailable', message: 'thread queries are unavailable right now' } };
    }
  }

  private async run(tenant: string, op: ThreadsOp, request: ThreadsRequest<ThreadsOp>): Promise<AnyReply> {
    const sql = this.runtime.db.sql;
    const content = this.runtime.db.content;
    switch (op) {
      case 'get': {
        const { threadId } = request as ThreadsRequest<'get'>;
        const thread = await getThread(sql, content, tenant, threadId);
        return thread ? { ok: true, thread } : notFound(`no thread ${threadId}`);
      }
      case 'list': {
        const r = request as ThreadsRequest<'list'>;
        const after = r.cursor === undefined ? undefined : decodeCursor(r.cursor);
        if (r.cursor !== undefined && !after) return invalid('the cursor is not one this API returned');
        const page = await listThreadPage(sql, tenant, {
          status: r.status,
          agent: r.agent,
          limit: r.limit,
          ...(after ? { after } : {}),
        });
        return { ok: true, ...page };
      }
      case 'events': {
        const r = request as ThreadsRequest<'events'>;
        const page = await readEventPage(sql, content, tenant, r.threadId, r.after, r.limit);
        return page ? { ok: true, ...page } : notFound(`no thread ${r.threadId}`);
      }
      case 'run': {
        const { runId } = request as ThreadsRequest<'run'>;
        const run = await getRun(sql, content, tenant, runId);
        return run ? { ok: true, run } : notFound(`no run ${runId}`);
      }
      case 'runs': {
        const { cursor, ...r } = request as ThreadsRequest<'runs'>;
        const after = cursor === undefined ? undefined : decodeRunCursor(cursor);
        if (cursor !== undefined && !after) return invalid('the cursor is not one this API returned');
        return { ok: true, ...(await searchRunPage(sql, tenant, { ...r, ...(after ? { after } : {}) })) };
      }
      case 'admission': {
        const { requestId } = request as ThreadsRequest<'admission'>;
        const limit = this.admission.maxActiveRuns;
        const waitingLimit = this.admission.maxWaitingRuns;
        const facts = await runAdmissionFacts(sql, tenant, requestId, { active: limit, waiting: waitingLimit });
        return { ok: true, limit, waitingLimit, ...facts, overBound: this.admission.overBound ?? 'refuse' };
      }
      case 'usage':
        return { ok: true, usage: await usageReport(sql, tenant, request as ThreadsRequest<'usage'>) };
      case 'erase': {
        const { threadId, by } = request as ThreadsRequest<'erase'>;
        const events = this.runtime.topology.streams.find((s) => s.role === 'events')!.config.name;
        const result = await eraseThread(
          this.runtime.db,
          await this.runtime.nc.jetstreamManager(),
          { eventsStream: events, eventsSubjects: threadFeedSubjects(this.runtime.subjects, tenant, threadId) },
          tenant,
          threadId,
          by,
        );
        switch (result.status) {
          case 'erased':
          case 'already':
            return { ok: true, erased: result.status === 'erased', removed: result.removed };
          case 'busy':
            return {
              ok: false,
              error: {
                code: 'conflict',
                message: `thread ${threadId} has a run going: cancel it or let it end, then erase it; nothing was removed`,
              },
            };
          case 'not-found':
            return notFound(`no thread ${threadId}`);
          default: {
            const _exhaustive: never = result;
            return _exhaustive;
          }
        }
      }
    }
  }
}

/** A threads request refused as invalid, naming each problem. */
export function invalid(message: string, problems?: string[]): AnyReply {
  return { ok: false, error: { code: 'invalid', message, ...(problems ? { problems } : {}) } };
}

function notFound(message: string): AnyReply {
  return { ok: false, error: { code: 'not_found', message } };
}
