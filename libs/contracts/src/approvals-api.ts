import { z } from 'zod';
import { CallId, IsoTime, Principal, RunId, SubjectToken, TenantId, ThreadId } from './ids';
import { Json, JsonObject } from './messages';
import { ApprovalRequestCommand, HeldCallHeader } from './wire';
import { WaitpointOnExpiry } from './thread-events';

/**
 * The approvals service's contracts (architecture §7):
 *
 * - commands it consumes on `<prefix>.cmd.approval.<tenant>` (durable consumer `approvals`): a call
 *   waiting for a human (`approval.request`, from the orchestrator's outbox) and an uncertain effect
 *   waiting for a human (`escalation.request`, from the orchestrator when it records `effect.uncertain`);
 * - request/reply on `<prefix>.approvals.api`: list, get, decide (relayed by the gateway, which
 *   authenticates the principal and binds the tenant) and verify (asked by the orchestrator when it
 *   applies a granted decision);
 * - request/reply on `<prefix>.principals.check`, answered by the gateway (which owns principals): does
 *   this principal still exist, unrevoked, with these roles?
 *
 * The request/reply subjects carry the principal in the body: only the gateway and the orchestrator may
 * publish on them (NATS permissions), the same trust boundary as `<prefix>.requests.<tenant>`.
 */
export function approvalsSubjects(prefix: string) {
  return {
    api: `${prefix}.approvals.api`,
    principalsCheck: `${prefix}.principals.check`,
  };
}

/** A human's answer to an uncertain effect: the tool executor's `tool.resolve` choices. */
export const ESCALATION_CHOICES = ['happened', 'retry', 'fail'] as const;
export const TOOL_APPROVAL_CHOICES = ['approve', 'reject'] as const;

/** Orchestrator → approvals: an effect is `uncertain` and needs a human to say what happened. */
export const EscalationRequestCommand = z.object({
  kind: z.literal('escalation.request'),
  ...HeldCallHeader,
  idempotencyKey: z.string().min(1),
  reason: z.string().max(2000),
  role: z.string(),
  requestedBy: Principal,
});
export type EscalationRequestCommand = z.infer<typeof EscalationRequestCommand>;

/**
 * Orchestrator → approvals: a tool call opened a waitpoint (its run waits until the outside world completes
 * it, or it expires): kept as an approval of kind `waitpoint` whose id is the waitpoint's (ADR 0041).
 */
export const WaitpointRequestCommand = z.object({
  kind: z.literal('waitpoint.request'),
  ...HeldCallHeader,
  expiresAt: IsoTime,
  onExpiry: WaitpointOnExpiry,
  resultSchema: JsonObject.optional(),
  requestedBy: Principal,
});
export type WaitpointRequestCommand = z.infer<typeof WaitpointRequestCommand>;

/** Everything the approvals service consumes on `<prefix>.cmd.approval.<tenant>`. */
export const ApprovalCommand = z.discriminatedUnion('kind', [
  ApprovalRequestCommand,
  EscalationRequestCommand,
  WaitpointRequestCommand,
]);
export type ApprovalCommand = z.infer<typeof ApprovalCommand>;

export const ApprovalKind = z.enum(['tool', 'escalation', 'waitpoint']);
export type ApprovalKind = z.infer<typeof ApprovalKind>;
export const ApprovalStatus = z.enum([
  'pending',
  'granted',
  'rejected',
  'expired',
  'resolved',
  'cancelled',
  'completed',
  'failed',
]);
export type ApprovalStatus = z.infer<typeof ApprovalStatus>;
export const ApprovalChoice = z.enum([...TOOL_APPROVAL_CHOICES, ...ESCALATION_CHOICES]);
export type ApprovalChoice = z.infer<typeof ApprovalChoice>;

/** One approval as an approver sees it. */
export const ApprovalView = z.object({
  id: z.string(),
  kind: ApprovalKind,
  status: ApprovalStatus,
  threadId: ThreadId,
  runId: RunId,
  step: z.number().int(),
  callId: CallId,
  agent: z.string(),
  tool: z.string(),
  args: JsonObject,
  argsDigest: z.string(),
  role: z.string(),
  fourEyes: z.boolean(),
  requestedBy: z.string(),
  requestedAt: z.string(),
  expiresAt: z.string().nullable(),
  choices: z.array(ApprovalChoice),
  /** Escalations: the ledger key and why the effect is uncertain. */
  idempotencyKey: z.string().nullable(),
  reason: z.string().nullable(),
  decision: z.object({ decision: z.string(), by: z.string(), reason: z.string(), at: z.string() }).nullable(),
  /**
   * Waitpoints: what their expiry does and the schema a result must fit (null for approvals and
   * escalations). Optional: an approvals service of the release before waitpoints does not send it, and a
   * gateway rolled out first must still read its answers.
   */
  waitpoint: z.object({ onExpiry: WaitpointOnExpiry, resultSchema: JsonObject.nullable() }).nullable().optional(),
});
export type ApprovalView = z.infer<typeof ApprovalView>;

const ApprovalId = z.string().min(1).max(128);

export const ApprovalsRequest = z.discriminatedUnion('op', [
  z
    .object({
      op: z.literal('list'),
      tenantId: TenantId,
      principal: Principal,
      status: ApprovalStatus.optional(),
      threadId: SubjectToken.optional(),
      agent: z.string().max(128).optional(),
      /** Only approvals of these kinds (a service of the release before waitpoints refuses the field: `invalid`). */
      kind: z.array(ApprovalKind).min(1).max(3).optional(),
      /** Only approvals requested at least this many seconds ago. */
      olderThanSeconds: z.number().int().nonnegative().optional(),
      limit: z.number().int().positive().max(500).default(100),
    })
    .strict(),
  z.object({ op: z.literal('get'), tenantId: TenantId, principal: Principal, approvalId: ApprovalId }).strict(),
  z
    .object({
      op: z.literal('decide'),
      tenantId: TenantId,
      principal: Principal,
      approvalId: ApprovalId,
      decision: ApprovalChoice,
      reason: z.string().max(2000).default(''),
      /** Escalations decided `happened`: the result the outside world shows. */
      result: Json.optional(),
    })
    .strict(),
  z
    .object({
      op: z.literal('complete'),
      tenantId: TenantId,
      /** Who completes it (a principal of the tenant; the signed callback names itself `callback`). */
      principal: Principal,
      approvalId: ApprovalId,
      /** `completed` with `result`, or `failed` with `error` (what went wrong outside). */
      outcome: z.enum(['completed', 'failed']),
      result: Json.optional(),
      error: z
        .object({ code: z.string().min(1).max(128), message: z.string().max(2000) })
        .strict()
        .optional(),
    })
    .strict(),
  z
    .object({
      op: z.literal('verify'),
      tenantId: TenantId,
      approvalId: ApprovalId,
      runId: RunId,
      callId: CallId,
      argsDigest: z.string(),
    })
    .strict(),
]);
export type ApprovalsRequest = z.infer<typeof ApprovalsRequest>;
export type ApprovalsRequestInput = z.input<typeof ApprovalsRequest>;

export const ApprovalsErrorCode = z.enum(['invalid', 'not_found', 'forbidden', 'conflict', 'unavailable']);
export type ApprovalsErrorCode = z.infer<typeof ApprovalsErrorCode>;

export const ApprovalsReply = z.union([
  z.object({ ok: z.literal(true), approvals: z.array(ApprovalView) }),
  z.object({ ok: z.literal(true), approval: ApprovalView }),
  /** verify: `valid: false` names why (a code, a colon, a sentence) — the orchestrator turns it into a rejection. */
  z.object({ ok: z.literal(true), valid: z.boolean(), reason: z.string().optional() }),
  z.object({
    ok: z.literal(false),
    /** `refusal`: the named refusal of a waitpoint completion (`waitpoint.expired`, `waitpoint.conflict`, …). */
    error: z.object({ code: ApprovalsErrorCode, message: z.string(), refusal: z.string().optional() }),
  }),
]);
export type ApprovalsReply = z.infer<typeof ApprovalsReply>;

/**
 * `<prefix>.waitpoints.<tenant>.complete`: another service of the tenant completes a waitpoint (a job it
 * ran finished, or failed). `by` names the sender in the waitpoint's decision and audit (`nats:<by>`);
 * the answer is an `ApprovalsReply`, as `POST /v1/waitpoints/{id}/complete` gets it.
 */
export const WaitpointCompletionRequest = z
  .object({
    waitpointId: z.string().min(1).max(128),
    result: Json.optional(),
    error: z
      .object({ code: z.string().min(1).max(128), message: z.string().max(2000) })
      .strict()
      .optional(),
    by: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,64}$/)
      .default('service'),
  })
  .strict()
  .refine((b) => (b.result === undefined) !== (b.error === undefined), {
    message: 'give either "result" (the job finished) or "error" (it failed), not both and not neither',
  });
export type WaitpointCompletionRequest = z.infer<typeof WaitpointCompletionRequest>;
export type WaitpointCompletionRequestInput = z.input<typeof WaitpointCompletionRequest>;

/** Does this principal (still) exist in this tenant, unrevoked, holding these roles? */
export const PrincipalCheckRequest = z
  .object({
    tenantId: TenantId,
    principalId: z.string().min(1).max(256),
    roles: z.array(z.string().min(1).max(64)).max(32).default([]),
    /** When the run acting as the principal started: a JWT deny-list entry added later revokes it (ADR 0035). */
    runStartedAt: IsoTime.optional(),
  })
  .strict();
export type PrincipalCheckRequest = z.infer<typeof PrincipalCheckRequest>;

/**
 * `valid`: it exists and holds every role asked for; `invalid`: it does not (revoked, expired, unknown,
 * or a role is missing — `reason` says which; a JWT subject on the tenant's deny list); `unmanaged`: the
 * gateway does not keep this principal's roles (a JWT subject not revoked, a service that published its
 * run request itself), so only the roles recorded on the run can count.
 */
export const PrincipalCheckReply = z.union([
  z.object({
    ok: z.literal(true),
    status: z.enum(['valid', 'invalid', 'unmanaged']),
    reason: z.string().optional(),
    roles: z.array(z.string()).optional(),
  }),
  z.object({
    ok: z.literal(false),
    error: z.object({ code: z.enum(['invalid', 'unavailable']), message: z.string() }),
  }),
]);
export type PrincipalCheckReply = z.infer<typeof PrincipalCheckReply>;
