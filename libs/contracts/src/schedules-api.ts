import { z } from 'zod';
import { DefinitionRefusal } from './agents-api';
import { IsoTime, Principal, SubjectToken } from './ids';

/**
 * Schedules over request/reply with the orchestrator, which owns them (the gateway's `/v1/schedules`
 * relays to it): `<prefix>.schedules.<tenant>.<op>`. The tenant is the subject's (bound by NATS
 * permissions), never the body's; another tenant's schedules are not found.
 */
export const ScheduleBody = z
  .strictObject({
    id: SubjectToken.max(64).optional().describe('A name within your tenant; omitted = generated'),
    agent: z.string().min(1).max(128).describe('The agent each tick runs'),
    input: z.string().min(1).max(100_000).describe("Each tick's user message"),
    cron: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe('A cron expression: 5 fields, or 6 with seconds first (exactly one of cron, everySeconds)'),
    timezone: z.string().min(1).max(64).optional().describe('IANA time zone the cron is read in; default UTC'),
    everySeconds: z.number().int().min(1).max(31_622_400).optional().describe('An interval, from creation'),
    thread: z.enum(['new', 'shared']).default('new').describe('new: a thread per tick; shared: one thread'),
    overlap: z
      .enum(['skip', 'enqueue', 'cancel-previous'])
      .default('skip')
      .describe("A tick while the previous tick's run goes on: skip it, enqueue (shared thread), or cancel that run"),
    catchUp: z
      .enum(['skip', 'once', 'all'])
      .default('skip')
      .describe('Ticks missed (more than the grace late): skip them, run once, or run each up to catchUpMax'),
    catchUpMax: z.number().int().min(1).max(1000).default(10),
    endAt: IsoTime.optional().describe('No tick after this instant'),
    webhookUrl: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .describe("Each tick's run posts its outcome here"),
    paused: z.boolean().default(false),
  })
  .describe('ScheduleBody');
export type ScheduleBody = z.infer<typeof ScheduleBody>;

export const SchedulePatch = z
  .strictObject({
    paused: z.boolean().optional().describe('false resumes: ticks missed while paused are not caught up'),
    input: z.string().min(1).max(100_000).optional(),
    endAt: IsoTime.nullable().optional(),
    webhookUrl: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .nullable()
      .optional(),
  })
  .describe('SchedulePatch');
export type SchedulePatch = z.infer<typeof SchedulePatch>;

export const ScheduleTickView = z.object({
  tickAt: IsoTime,
  action: z.enum(['start', 'skip']),
  reason: z.string().nullable().describe('Why a tick was skipped (overlap)'),
  requestId: z.string().nullable().describe("The run request it made (the run's id derives from it)"),
  runId: z.string().nullable(),
  decidedAt: IsoTime,
  decidedBy: z.string().describe('The orchestrator that decided it'),
});

export const ScheduleView = z
  .object({
    id: z.string(),
    agent: z.string(),
    input: z.string(),
    cron: z.string().optional(),
    timezone: z.string().optional(),
    everySeconds: z.number().optional(),
    thread: z.enum(['new', 'shared']),
    threadId: z.string().optional().describe('The shared thread (thread: shared)'),
    overlap: z.enum(['skip', 'enqueue', 'cancel-previous']),
    catchUp: z.enum(['skip', 'once', 'all']),
    catchUpMax: z.number().optional(),
    endAt: IsoTime.optional(),
    webhookUrl: z.string().optional(),
    paused: z.boolean(),
    pausedReason: z
      .string()
      .optional()
      .describe('Why it was paused when no one asked it: `principal.revoked: …` (its creator was revoked)'),
    createdBy: z.string(),
    createdAt: IsoTime,
    updatedAt: IsoTime,
    nextDueAt: IsoTime.nullable().describe('null: paused or past its end'),
    lastRunId: z.string().nullable(),
    recentTicks: z.array(ScheduleTickView).optional().describe('The latest ticks, newest first (get only)'),
  })
  .describe('ScheduleView');
export type ScheduleView = z.infer<typeof ScheduleView>;

export const SchedulesRequest = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('list'), principal: Principal }),
  z.strictObject({ op: z.literal('get'), principal: Principal, id: SubjectToken }),
  z.strictObject({ op: z.literal('create'), principal: Principal, schedule: z.unknown() }),
  z.strictObject({ op: z.literal('update'), principal: Principal, id: SubjectToken, patch: z.unknown() }),
  z.strictObject({ op: z.literal('delete'), principal: Principal, id: SubjectToken }),
]);
export type SchedulesRequest = z.infer<typeof SchedulesRequest>;
export type SchedulesOp = SchedulesRequest['op'];

export const SchedulesReply = z.union([
  z.object({ ok: z.literal(true), schedules: z.array(ScheduleView) }),
  z.object({ ok: z.literal(true), schedule: ScheduleView, created: z.boolean().optional() }),
  z.object({ ok: z.literal(true), deleted: z.string() }),
  DefinitionRefusal,
]);
export type SchedulesReply = z.infer<typeof SchedulesReply>;

/** The role that manages schedules: the one that starts runs (each tick's run acts as the schedule's creator). */
export const SCHEDULES_WRITE_ROLE = 'runner';
