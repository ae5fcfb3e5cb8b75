import { SchedulesReply, subjects, type ScheduleView, type SchedulesRequest } from '@ratchet/contracts';
import { assertToken, plural, type CommandContext } from '../context';
import { CliError, UsageError } from '../errors';
import { table } from '../format';
import { askOrchestrators } from '../orchestrator-request';

/** Who a schedule created here runs as, unless `--as` names someone. */
export const SCHEDULE_PRINCIPAL = 'ratchet-cli';

/**
 * Asks the orchestrators, over `<prefix>.schedules.<tenant>.<op>` — the same service the gateway's
 * `/v1/schedules` relays to, so a schedule is validated the same way whichever door it comes in by.
 */
async function ask({ config }: CommandContext, tenant: string, request: SchedulesRequest): Promise<SchedulesReply> {
  assertToken('tenant', tenant);
  const subject = subjects(config.RATCHET_SUBJECT_PREFIX).schedules(tenant, request.op);
  const reply = SchedulesReply.parse(await askOrchestrators(config, subject, request, 'schedules'));
  if (!reply.ok) {
    const detail = reply.error.problems?.length ? `\n  ${reply.error.problems.join('\n  ')}` : '';
    throw new CliError(`${reply.error.message}${detail}`, undefined, `schedules.${reply.error.code}`);
  }
  return reply;
}

const operator = (as: string | undefined) => ({ id: as ?? SCHEDULE_PRINCIPAL, roles: ['runner'] });

function timing(s: ScheduleView): string {
  return s.cron !== undefined ? `${s.cron} (${s.timezone ?? 'UTC'})` : `every ${s.everySeconds}s`;
}

function print(ctx: CommandContext, schedules: ScheduleView[], note: string): void {
  const { out } = ctx;
  if (out.json) {
    for (const s of schedules) out.jsonLine(s);
    return;
  }
  const lines = table([
    ['ID', 'AGENT', 'WHEN', 'THREAD', 'OVERLAP', 'CATCH-UP', 'STATE', 'NEXT'],
    ...schedules.map((s) => [
      s.id,
      s.agent,
      timing(s),
      s.thread,
      s.overlap,
      s.catchUp === 'all' ? `all (max ${s.catchUpMax})` : s.catchUp,
      s.paused
        ? s.pausedReason
          ? `paused (${s.pausedReason.split(':')[0]})`
          : 'paused'
        : s.nextDueAt
          ? 'active'
          : 'ended',
      s.nextDueAt ?? '-',
    ]),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  for (const s of schedules) if (s.pausedReason) out.note(`${s.id}: ${s.pausedReason}`);
  out.note(note);
}

export interface ScheduleCreateOptions {
  tenant: string;
  agent: string;
  input: string;
  id?: string;
  cron?: string;
  timezone?: string;
  every?: string;
  thread?: string;
  overlap?: string;
  catchUp?: string;
  catchUpMax?: string;
  endAt?: string;
  webhook?: string;
  paused?: boolean;
  as?: string;
}

function wholeNumber(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a whole number of at least 1, not ${raw}`);
  return n;
}

export async function createSchedule(ctx: CommandContext, o: ScheduleCreateOptions): Promise<ScheduleView> {
  const schedule = {
    ...(o.id !== undefined ? { id: o.id } : {}),
    agent: o.agent,
    input: o.input,
    ...(o.cron !== undefined ? { cron: o.cron } : {}),
    ...(o.timezone !== undefined ? { timezone: o.timezone } : {}),
    ...(o.every !== undefined ? { everySeconds: wholeNumber('--every', o.every) } : {}),
    ...(o.thread !== undefined ? { thread: o.thread } : {}),
    ...(o.overlap !== undefined ? { overlap: o.overlap } : {}),
    ...(o.catchUp !== undefined ? { catchUp: o.catchUp } : {}),
    ...(o.catchUpMax !== undefined ? { catchUpMax: wholeNumber('--catch-up-max', o.catchUpMax) } : {}),
    ...(o.endAt !== undefined ? { endAt: o.endAt } : {}),
    ...(o.webhook !== undefined ? { webhookUrl: o.webhook } : {}),
    ...(o.paused ? { paused: true } : {}),
  };
  const reply = await ask(ctx, o.tenant, { op: 'create', principal: operator(o.as), schedule });
  if (!('schedule' in reply)) throw new CliError('unexpected reply', undefined, 'schedules.reply');
  print(
    ctx,
    [reply.schedule],
    `schedule ${reply.schedule.id} created; next tick ${reply.schedule.nextDueAt ?? 'never'}`,
  );
  return reply.schedule;
}

/** `ratchet schedules list`: a tenant's schedules. */
export async function listSchedules(ctx: CommandContext, tenant: string): Promise<void> {
  const reply = await ask(ctx, tenant, { op: 'list', principal: operator(undefined) });
  const list = 'schedules' in reply ? reply.schedules : [];
  print(ctx, list, `${plural(list.length, 'schedule')} for tenant ${tenant}`);
}

/** `ratchet schedules pause|resume`. */
export async function setSchedulePaused(
  ctx: CommandContext,
  tenant: string,
  id: string,
  paused: boolean,
): Promise<void> {
  const reply = await ask(ctx, tenant, {
    op: 'update',
    principal: operator(undefined),
    id,
    patch: { paused },
  });
  if ('schedule' in reply) print(ctx, [reply.schedule], `schedule ${id} ${paused ? 'paused' : 'resumed'}`);
}

/** `ratchet schedules delete`. */
export async function deleteSchedule(ctx: CommandContext, tenant: string, id: string): Promise<void> {
  await ask(ctx, tenant, { op: 'delete', principal: operator(undefined), id });
  if (ctx.out.json) ctx.out.jsonLine({ deleted: id });
  else ctx.out.line(`${ctx.out.style('green', '✔')} schedule ${id} deleted`);
}
