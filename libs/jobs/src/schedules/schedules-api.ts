import {
  ScheduleBody,
  SchedulePatch,
  SCHEDULES_WRITE_ROLE,
  SchedulesRequest,
  type SchedulesReply,
} from '@ratchet/contracts';
import { SchedulesRepository, webhookUrlProblem, withServiceTx, type Database } from '@ratchet/adapters';
import { freshCursor, scheduleProblems, type Schedule } from '@ratchet/domain';
import { newId } from '@ratchet/platform';
import type { Clock } from '../clock';
import { scheduleView } from './schedule-view';
import { PRINCIPAL_REVOKED } from '../revocations/revocation-messages';

type Failure = Extract<SchedulesReply, { ok: false }>;

/** A refused schedules request: its code, what to tell the caller and, for a bad schedule, every problem. */
const fail = (code: Failure['error']['code'], message: string, problems?: string[]): Failure => ({
  ok: false,
  error: { code, message, ...(problems ? { problems } : {}) },
});

/**
 * A tenant's schedules as requests and replies (`SchedulesRequest` → `SchedulesReply`): the tenant is the
 * caller's (the subject's), never the body's. Writes need the role that starts runs: each tick's run acts
 * as the schedule's creator. A bad schedule is refused whole, every problem named; nothing is half-written.
 */
export class SchedulesApi {
  constructor(
    private readonly runtime: { readonly db: Database },
    private readonly agents: { latest(tenant: string, name: string): Promise<unknown> },
    private readonly clock: Clock,
    private readonly webhooks: { allowPrivate: boolean },
  ) {}

  async answer(tenantId: string, data: Uint8Array): Promise<SchedulesReply> {
    let raw: unknown;
    try {
      raw = JSON.parse(new TextDecoder().decode(data));
    } catch {
      return fail('invalid', 'the request is not JSON');
    }
    const parsed = SchedulesRequest.safeParse(raw);
    if (!parsed.success) return fail('invalid', 'invalid schedules request', issues(parsed.error.issues));
    const request = parsed.data;
    const repo = new SchedulesRepository(this.runtime.db.sql);
    if (request.op !== 'list' && request.op !== 'get' && !request.principal.roles.includes(SCHEDULES_WRITE_ROLE))
      return fail('forbidden', `managing schedules needs the ${SCHEDULES_WRITE_ROLE} role`);
    switch (request.op) {
      case 'list':
        return { ok: true, schedules: (await repo.list(tenantId)).map((s) => scheduleView(s)) };
      case 'get': {
        const stored = await repo.get(tenantId, request.id);
        if (!stored) return notFound(request.id);
        return { ok: true, schedule: scheduleView(stored, await repo.ticks(tenantId, request.id, 20)) };
      }
      case 'create':
        return this.create(tenantId, request.principal, request.schedule);
      case 'update':
        return this.update(tenantId, request.id, request.patch);
      case 'delete': {
        const deleted = await withServiceTx(this.runtime.db, (tx) =>
          new SchedulesRepository(tx).delete(tenantId, request.id),
        );
        return deleted ? { ok: true, deleted: request.id } : notFound(request.id);
      }
      default: {
        const _exhaustive: never = request;
        return _exhaustive;
      }
    }
  }

  private async create(
    tenantId: string,
    principal: { id: string; roles: string[] },
    body: unknown,
  ): Promise<SchedulesReply> {
    const parsed = ScheduleBody.safeParse(body);
    if (!parsed.success) return fail('invalid', 'invalid schedule', issues(parsed.error.issues));
    const b = parsed.data;
    const problems: string[] = [];
    if ((b.cron === undefined) === (b.everySeconds === undefined))
      problems.push('cron, everySeconds: give exactly one of them');
    if (b.timezone !== undefined && b.cron === undefined) problems.push('timezone: only with cron');
    if (b.webhookUrl) {
      const why = webhookUrlProblem(b.webhookUrl, this.webhooks);
      if (why) problems.push(`webhookUrl: ${why}`);
    }
    if (problems.length > 0) return fail('invalid', `invalid schedule: ${problems.join('; ')}`, problems);
    const now = this.clock.now().toISOString();
    const schedule: Schedule = {
      id: b.id ?? newId('sch'),
      tenantId,
      timing:
        b.cron !== undefined
          ? { kind: 'cron', expression: b.cron, timezone: b.timezone ?? 'UTC' }
          : { kind: 'interval', everyMs: (b.everySeconds ?? 0) * 1000 },
      agent: b.agent,
      input: b.input,
      thread: b.thread,
      overlap: b.overlap,
      catchUp: b.catchUp === 'all' ? { kind: 'all', max: b.catchUpMax } : { kind: b.catchUp },
      paused: b.paused,
      anchorAt: now,
      principal: { id: principal.id, roles: principal.roles },
      ...(b.endAt ? { endAt: new Date(b.endAt).toISOString() } : {}),
      ...(b.webhookUrl ? { webhookUrl: b.webhookUrl } : {}),
    };
    problems.push(...scheduleProblems(schedule));
    if (!(await this.agents.latest(tenantId, b.agent))) problems.push(`agent: unknown agent "${b.agent}"`);
    if (problems.length > 0) return fail('invalid', `invalid schedule: ${problems.join('; ')}`, problems);
    const repo = new SchedulesRepository(this.runtime.db.sql);
    const inserted = await repo.insert(schedule, freshCursor(schedule, now));
    if (!inserted) return fail('conflict', `a schedule "${schedule.id}" exists already`);
    const stored = await repo.get(tenantId, schedule.id);
    if (!stored) return notFound(schedule.id);
    return { ok: true, schedule: scheduleView(stored), created: true };
  }

  private async update(tenantId: string, id: string, body: unknown): Promise<SchedulesReply> {
    const parsed = SchedulePatch.safeParse(body);
    if (!parsed.success) return fail('invalid', 'invalid schedule change', issues(parsed.error.issues));
    const patch = parsed.data;
    if (patch.webhookUrl) {
      const why = webhookUrlProblem(patch.webhookUrl, this.webhooks);
      if (why) return fail('invalid', `webhookUrl: ${why}`, [`webhookUrl: ${why}`]);
    }
    return withServiceTx(this.runtime.db, async (tx) => {
      const repo = new SchedulesRepository(tx);
      const stored = await repo.get(tenantId, id, true);
      if (!stored) return notFound(id);
      const now = this.clock.now().toISOString();
      const before = stored.schedule;
      // Its ticks would start runs as a principal whose credential is revoked: it stays paused.
      if (before.paused && patch.paused === false && stored.pausedReason?.startsWith(PRINCIPAL_REVOKED))
        return fail(
          'conflict',
          `schedule "${id}" cannot resume: it starts its runs as its creator, whose credential was revoked (${stored.pausedReason}); create a new schedule`,
        );
      const { endAt: _e, webhookUrl: _w, ...rest } = before;
      const next: Schedule = {
        ...rest,
        paused: patch.paused ?? before.paused,
        input: patch.input ?? before.input,
        ...(patch.endAt === null
          ? {}
          : patch.endAt
            ? { endAt: new Date(patch.endAt).toISOString() }
            : before.endAt
              ? { endAt: before.endAt }
              : {}),
        ...(patch.webhookUrl === null
          ? {}
          : patch.webhookUrl
            ? { webhookUrl: patch.webhookUrl }
            : before.webhookUrl
              ? { webhookUrl: before.webhookUrl }
              : {}),
      };
      const problems = scheduleProblems({ ...next, anchorAt: next.endAt && patch.endAt ? now : next.anchorAt });
      if (problems.length > 0) return fail('invalid', `invalid schedule: ${problems.join('; ')}`, problems);
      // Resuming starts from now (a pause is not downtime); any other change keeps the cursor.
      const resumed = before.paused && !next.paused;
      const cursor = resumed
        ? freshCursor(next, now)
        : {
            decidedThrough: stored.decidedThrough,
            nextDueAt: next.paused ? null : freshCursor(next, stored.decidedThrough).nextDueAt,
          };
      await repo.save(next, cursor, now);
      const saved = await repo.get(tenantId, id);
      return saved ? { ok: true as const, schedule: scheduleView(saved) } : notFound(id);
    });
  }
}

function notFound(id: string): Failure {
  return fail('not_found', `no schedule "${id}"`);
}

function issues(list: readonly { path: PropertyKey[]; message: string }[]): string[] {
  return list.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`);
}
