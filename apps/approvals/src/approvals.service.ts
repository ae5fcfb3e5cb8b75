import {
  ApprovalsRepository,
  withServiceTx,
  type ApprovalRecord,
  type Database,
  type ServiceTx,
} from '@ratchet/adapters';
import {
  HEADERS,
  type ApprovalCommand,
  type ApprovalDecisionMessage,
  type ApprovalsReply,
  type ApprovalsRequest,
  type ApprovalView,
  type Json,
  type Subjects,
  type ToolResolveCommand,
  type WaitpointDecisionMessage,
} from '@ratchet/contracts';
import {
  choicesOf,
  completeWaitpoint,
  decideApproval,
  maySee,
  seesAll,
  verifyUse,
  type Clock,
  type CommittedPublisher,
  type OutboxMessage,
  type WaitpointCompletion,
  type WaitpointRefusal,
} from '@ratchet/domain';
import { problemsOf } from '@ratchet/tools';
import { failpoint } from '@ratchet/platform';
import { CompiledSchemas } from './compiled-schemas';
import { newApproval, REQUEST_ACTION, requestDetail, WAITPOINT_ROLE } from './approval-requests';
import { recordApprovalWait, type EndedWait, type WaitOutcome } from './approval-wait.span';

type Req<O extends ApprovalsRequest['op']> = Extract<ApprovalsRequest, { op: O }>;
type Failure = Extract<ApprovalsReply, { ok: false }>;

const fail = (code: Failure['error']['code'], message: string): Failure => ({ ok: false, error: { code, message } });

/** What a transaction caused, acted on once it committed: messages to publish, waits to report. */
interface AfterCommit {
  outbox: OutboxMessage[];
  waits: EndedWait[];
}

/** Who records an expiry in the decision and audit rows. */
export const EXPIRY_ACTOR = 'system:expiry';
/** Who closes the approvals of a run that stopped. */
export const RUN_STOP_ACTOR = 'system:run-stop';
export { WAITPOINT_ROLE };
/** Who a waitpoint's expiry names in the thread's log. */
const WAITPOINT_EXPIRY_BY = 'ttl';

/** How each refused completion answers (the HTTP status follows the code). */
const REFUSAL_CODE: Record<WaitpointRefusal, Failure['error']['code']> = {
  'waitpoint.not_a_waitpoint': 'not_found',
  'waitpoint.forbidden': 'forbidden',
  'waitpoint.conflict': 'conflict',
  'waitpoint.expired': 'conflict',
  'waitpoint.closed': 'conflict',
  'waitpoint.invalid_result': 'invalid',
};

/**
 * The approvals service's rules (architecture §7). Each state change is one transaction: the approval
 * row, its one decision, the audit rows and the outbox row of the message it causes; the relay publishes
 * after commit. The tenant of every read and write is the one the caller was verified for.
 */
export class ApprovalsService {
  constructor(
    private readonly db: Database,
    private readonly relay: CommittedPublisher,
    private readonly subjects: Subjects,
    /** The clock of every rule that reads time (expiry, "older than"); injected at the composition root. */
    private readonly clock: Clock,
  ) {}

  /** Result schemas compiled once per schema text, not once per completion (a burst shares one agent's). */
  private readonly resultSchemas = new CompiledSchemas();

  /**
   * An approval or escalation request from the orchestrator; a re-sent one changes nothing.
   * `traceparent`: the run's trace context the request arrived with, kept for the wait's span.
   */
  async recordRequest(command: ApprovalCommand, traceparent?: string): Promise<'created' | 'exists'> {
    return withServiceTx(this.db, async (tx) => {
      const repo = new ApprovalsRepository(tx);
      const created = await repo.insert({ ...newApproval(command), traceparent: traceparent ?? null });
      if (!created) return 'exists' as const;
      await repo.audit({
        tenantId: command.tenantId,
        approvalId: command.approvalId,
        action: REQUEST_ACTION[command.kind],
        actor: command.requestedBy.id,
        argsDigest: command.argsDigest,
        detail: {
          threadId: command.threadId,
          runId: command.runId,
          callId: command.callId,
          tool: command.tool,
          ...requestDetail(command),
        },
      });
      return 'created' as const;
    });
  }

  async list(request: Req<'list'>): Promise<ApprovalsReply> {
    // Approvers see what they may decide; admins and viewers see every approval of the tenant.
    const seeAll = seesAll(request.principal);
    const records = await new ApprovalsRepository(this.db.sql).list(request.tenantId, {
      status: request.status,
      threadId: request.threadId,
      agent: request.agent,
      kinds: request.kind,
      requestedBefore:
        request.olderThanSeconds === undefined
          ? undefined
          : new Date(this.clock.now().getTime() - request.olderThanSeconds * 1000).toISOString(),
      roles: seeAll ? undefined : request.principal.roles,
      limit: request.limit,
    });
    return { ok: true, approvals: records.map(view) };
  }

  async get(request: Req<'get'>): Promise<ApprovalsReply> {
    const record = await new ApprovalsRepository(this.db.sql).get(request.tenantId, request.approvalId);
    if (!record) return fail('not_found', `no approval ${request.approvalId}`);
    if (!maySee(request.principal, record))
      return fail('forbidden', `deciding this approval needs the role ${record.role}`);
    return { ok: true, approval: view(record) };
  }

  /**
   * A human's decision. Accepted only from a principal of the approval's tenant (another tenant's id is
   * not found) holding its role, and — with four-eyes — not the run's own principal; recorded once.
   */
  async decide(request: Req<'decide'>): Promise<ApprovalsReply> {
    const done: AfterCommit = { outbox: [], waits: [] };
    const reply = await withServiceTx(this.db, async (tx): Promise<ApprovalsReply> => {
      const repo = new ApprovalsRepository(tx);
      const a = await repo.get(request.tenantId, request.approvalId, { forUpdate: true });
      if (!a) return fail('not_found', `no approval ${request.approvalId}`);
      const who = request.principal.id;
      const refuse = async (code: 'forbidden' | 'conflict' | 'invalid', message: string): Promise<ApprovalsReply> => {
        await repo.audit({
          tenantId: a.tenantId,
          approvalId: a.id,
          action: 'refused',
          actor: who,
          argsDigest: a.argsDigest,
          detail: { decision: request.decision, code, message },
        });
        return fail(code, message);
      };
      const outcome = decideApproval(a, request.decision, request.principal, this.clock.now());
      if (outcome.kind === 'refused') return refuse(outcome.code, outcome.message);
      if (outcome.kind === 'expired') {
        await this.expireIn(tx, repo, a, done);
        return refuse('conflict', outcome.message);
      }
      const { decision, status } = outcome;
      const result: Json | null =
        request.decision === 'happened' ? (request.result ?? { happened: true, note: request.reason }) : null;
      if (!(await repo.decide(a.tenantId, a.id, decision, status, who, request.reason, result)))
        return refuse('conflict', 'this approval was already decided');
      await repo.audit({
        tenantId: a.tenantId,
        approvalId: a.id,
        action: decision,
        actor: who,
        argsDigest: a.argsDigest,
        detail: { reason: request.reason, roles: request.principal.roles },
      });
      const message =
        a.kind === 'tool'
          ? this.decisionMessage(a, decision as 'granted' | 'rejected', who, request.reason)
          : this.resolveMessage(a, request.decision as 'happened' | 'retry' | 'fail', who, request.reason, result);
      await tx.enqueue([message]);
      done.outbox.push(message);
      done.waits.push({ approval: a, outcome: decision as WaitOutcome, decidedByRole: a.role });
      const after = await repo.get(a.tenantId, a.id);
      return { ok: true, approval: view(after ?? a) };
    });
    await this.afterCommit(done);
    return reply;
  }

  /**
   * The outside world completes a waitpoint (ADR 0041): with a result that fits its schema, or with the
   * error it reports. Recorded once, with the message that wakes its run, in one transaction; the same
   * completion again answers as the first did and records nothing; another body, an expired or a closed
   * waitpoint is refused by name (audited); another tenant's id is not found.
   */
  async complete(request: Req<'complete'>): Promise<ApprovalsReply> {
    const completion = completionOf(request);
    if (!completion.ok) return fail('invalid', completion.message);
    const done: AfterCommit = { outbox: [], waits: [] };
    const reply = await withServiceTx(this.db, async (tx): Promise<ApprovalsReply> => {
      const repo = new ApprovalsRepository(tx);
      const w = await repo.get(request.tenantId, request.approvalId, { forUpdate: true });
      if (!w || w.kind !== 'waitpoint') return fail('not_found', `no waitpoint ${request.approvalId}`);
      const who = request.principal.id;
      const refuse = async (refusal: WaitpointRefusal, message: string): Promise<ApprovalsReply> => {
        await repo.audit({
          tenantId: w.tenantId,
          approvalId: w.id,
          action: 'refused',
          actor: who,
          argsDigest: w.argsDigest,
          detail: { outcome: request.outcome, refusal, message },
        });
        return { ok: false, error: { code: REFUSAL_CODE[refusal], message, refusal } };
      };
      if (!request.principal.roles.includes(w.role))
        return refuse('waitpoint.forbidden', `completing a waitpoint needs the role ${w.role}`);
      const outcome = completeWaitpoint(
        w,
        completion.value,
        this.resultProblems(w, completion.value),
        this.clock.now(),
      );
      switch (outcome.kind) {
        case 'refused':
          return refuse(outcome.refusal, outcome.message);
        case 'expire':
          await this.expireIn(tx, repo, w, done);
          return refuse(outcome.refusal, outcome.message);
        case 'replay':
          return { ok: true, approval: view(w) };
        case 'complete':
          break;
        default: {
          const unknown: never = outcome;
          return unknown;
        }
      }
      const reason = completion.value.outcome === 'failed' ? completion.value.error.message : '';
      if (!(await repo.decide(w.tenantId, w.id, outcome.decision, outcome.decision, who, reason, outcome.result)))
        return refuse('waitpoint.conflict', 'this waitpoint was completed meanwhile');
      await repo.audit({
        tenantId: w.tenantId,
        approvalId: w.id,
        action: outcome.decision,
        actor: who,
        argsDigest: w.argsDigest,
        detail: { roles: request.principal.roles },
      });
      const message = this.waitpointMessage(w, completion.value, who);
      await tx.enqueue([message]);
      done.outbox.push(message);
      done.waits.push({ approval: w, outcome: outcome.decision, decidedByRole: w.role });
      const after = await repo.get(w.tenantId, w.id);
      return { ok: true, approval: view(after ?? w) };
    });
    // The crash suite's line: the completion and its message are committed, nothing is published or answered.
    if (done.outbox.length > 0) failpoint('approvals.after-completion-commit');
    await this.afterCommit(done);
    return reply;
  }

  /** What a completion's result does wrong against the waitpoint's schema (none without a schema). */
  private resultProblems(w: ApprovalRecord, completion: WaitpointCompletion): string[] {
    if (completion.outcome !== 'completed' || !w.resultSchema) return [];
    const compiled = this.resultSchemas.compiled(w.resultSchema);
    // The tool's schema was checked when the tool was described; one that no longer compiles refuses every result.
    if (!compiled.ok) return [`the waitpoint's schema does not compile: ${compiled.problem}`];
    return problemsOf(compiled.validate, completion.result);
  }

  /**
   * The orchestrator, about to run a granted call: is this approval still good for exactly this call
   * and these arguments? Marks it used by the call; asking again for the same call answers the same.
   */
  async verify(request: Req<'verify'>): Promise<ApprovalsReply> {
    return withServiceTx(this.db, async (tx): Promise<ApprovalsReply> => {
      const repo = new ApprovalsRepository(tx);
      const a = await repo.get(request.tenantId, request.approvalId, { forUpdate: true });
      if (!a) return { ok: true, valid: false, reason: `approval.unknown: no approval ${request.approvalId}` };
      const use = `${request.runId}:${request.callId}`;
      const refuse = async (reason: string): Promise<ApprovalsReply> => {
        await repo.audit({
          tenantId: a.tenantId,
          approvalId: a.id,
          action: 'verify_refused',
          actor: 'orchestrator',
          argsDigest: request.argsDigest,
          detail: { reason, use },
        });
        return { ok: true, valid: false, reason };
      };
      const verdict = verifyUse(a, request, this.clock.now());
      if (!verdict.valid) return refuse(verdict.reason);
      const used = await repo.markUsed(a.tenantId, a.id, use);
      if (used === 'other')
        return refuse(`approval.used: the approval was already used by ${a.usedBy ?? 'another call'}`);
      if (used === 'used')
        await repo.audit({
          tenantId: a.tenantId,
          approvalId: a.id,
          action: 'used',
          actor: 'orchestrator',
          argsDigest: request.argsDigest,
          detail: { use, grantedBy: a.decision?.by ?? null },
        });
      return { ok: true, valid: true };
    });
  }

  /**
   * The run stopped (cancelled, interrupted, out of time): its approvals still pending are closed as
   * `cancelled`, with the reason, so they leave the inbox and a late decision is refused (409) saying
   * why. No message follows: the run already closed its calls. Doing it again closes nothing more.
   */
  async closeStoppedRun(notice: { tenantId: string; runId: string; reason: string }): Promise<number> {
    const done: AfterCommit = { outbox: [], waits: [] };
    const n = await withServiceTx(this.db, async (tx) => {
      const repo = new ApprovalsRepository(tx);
      let closed = 0;
      for (const a of await repo.lockPendingOfRun(notice.tenantId, notice.runId)) {
        const why = `its run ${notice.runId} stopped: ${notice.reason || 'no reason given'}`;
        if (!(await repo.decide(a.tenantId, a.id, 'cancelled', 'cancelled', RUN_STOP_ACTOR, why))) continue;
        await repo.audit({
          tenantId: a.tenantId,
          approvalId: a.id,
          action: 'cancelled',
          actor: RUN_STOP_ACTOR,
          argsDigest: a.argsDigest,
          detail: { runId: notice.runId, reason: notice.reason },
        });
        done.waits.push({ approval: a, outcome: 'cancelled', decidedByRole: 'system' });
        closed++;
      }
      return closed;
    });
    await this.afterCommit(done);
    return n;
  }

  /** Expires what is due (bounded batch); several instances share the work through `skip locked`. */
  async expireDue(limit = 50): Promise<number> {
    const done: AfterCommit = { outbox: [], waits: [] };
    const n = await withServiceTx(this.db, async (tx) => {
      const repo = new ApprovalsRepository(tx);
      const due = await repo.lockExpired(limit);
      for (const a of due) await this.expireIn(tx, repo, a, done);
      return due.length;
    });
    await this.afterCommit(done);
    return n;
  }

  private async expireIn(tx: ServiceTx, repo: ApprovalsRepository, a: ApprovalRecord, done: AfterCommit) {
    if (!(await repo.decide(a.tenantId, a.id, 'expired', 'expired', EXPIRY_ACTOR, `expired at ${a.expiresAt}`))) return;
    await repo.audit({
      tenantId: a.tenantId,
      approvalId: a.id,
      action: 'expired',
      actor: EXPIRY_ACTOR,
      argsDigest: a.argsDigest,
      detail: { expiresAt: a.expiresAt },
    });
    const message =
      a.kind === 'waitpoint'
        ? this.waitpointMessage(a, 'expired', WAITPOINT_EXPIRY_BY)
        : this.decisionMessage(a, 'expired', EXPIRY_ACTOR, `nobody decided before ${a.expiresAt}`);
    await tx.enqueue([message]);
    done.outbox.push(message);
    done.waits.push({ approval: a, outcome: 'expired', decidedByRole: 'system' });
  }

  private decisionMessage(
    a: ApprovalRecord,
    decision: ApprovalDecisionMessage['decision'],
    by: string,
    reason: string,
  ): OutboxMessage {
    // One decision per approval, so one message id: a re-send is dropped by JetStream and the thread inbox.
    const id = `approval-decision:${a.tenantId}:${a.id}`;
    const payload: ApprovalDecisionMessage = {
      kind: 'approval.decision',
      messageId: id,
      tenantId: a.tenantId,
      threadId: a.threadId,
      runId: a.runId,
      callId: a.callId,
      approvalId: a.id,
      decision,
      by,
      reason,
    };
    return { id, subject: this.subjects.inbox(a.tenantId, a.threadId), payload, headers: headers(id, payload.kind, a) };
  }

  private waitpointMessage(a: ApprovalRecord, decided: WaitpointCompletion | 'expired', by: string): OutboxMessage {
    // One decision per waitpoint, so one message id: a re-send is dropped by JetStream and the thread inbox.
    const id = `waitpoint-decision:${a.tenantId}:${a.id}`;
    const payload: WaitpointDecisionMessage = {
      kind: 'waitpoint.decision',
      messageId: id,
      tenantId: a.tenantId,
      threadId: a.threadId,
      runId: a.runId,
      callId: a.callId,
      waitpointId: a.id,
      by,
      ...(decided === 'expired'
        ? { decision: 'expired' as const }
        : decided.outcome === 'completed'
          ? { decision: 'completed' as const, result: decided.result }
          : { decision: 'failed' as const, error: { ...decided.error, retryable: false } }),
    };
    return { id, subject: this.subjects.inbox(a.tenantId, a.threadId), payload, headers: headers(id, payload.kind, a) };
  }

  private resolveMessage(
    a: ApprovalRecord,
    decision: 'happened' | 'retry' | 'fail',
    by: string,
    reason: string,
    result: Json | null,
  ): OutboxMessage {
    const id = `escalation-resolve:${a.tenantId}:${a.id}`;
    const payload: ToolResolveCommand = {
      kind: 'tool.resolve',
      commandId: id,
      tenantId: a.tenantId,
      idempotencyKey: a.idempotencyKey ?? '',
      resolution:
        decision === 'happened'
          ? { decision, result: result ?? null }
          : decision === 'retry'
            ? { decision }
            : { decision, reason },
      by,
    };
    const h = headers(id, payload.kind, a);
    if (a.idempotencyKey) h[HEADERS.idempotencyKey] = a.idempotencyKey;
    return { id, subject: this.subjects.toolCommands(a.tenantId), payload, headers: h };
  }

  private async afterCommit(done: AfterCommit): Promise<void> {
    // Only what committed is reported: a wait ends once, with the one decision recorded.
    for (const wait of done.waits) recordApprovalWait(wait);
    // If this process dies first, the relay's sweeper publishes them.
    await this.relay.publishCommitted(done.outbox);
  }
}

/** The decision continues the run's trace: it carries the context its request arrived with. */
function headers(id: string, type: string, a: ApprovalRecord): Record<string, string> {
  const h = { [HEADERS.msgId]: id, [HEADERS.messageType]: type, [HEADERS.tenant]: a.tenantId };
  return a.traceparent ? { ...h, [HEADERS.traceparent]: a.traceparent } : h;
}

export function view(a: ApprovalRecord): ApprovalView {
  return {
    id: a.id,
    kind: a.kind,
    status: a.status,
    threadId: a.threadId,
    runId: a.runId,
    step: a.step,
    callId: a.callId,
    agent: a.agent,
    tool: a.tool,
    args: a.args,
    argsDigest: a.argsDigest,
    role: a.role,
    fourEyes: a.fourEyes,
    requestedBy: a.requestedBy,
    requestedAt: a.requestedAt,
    expiresAt: a.expiresAt,
    choices: choicesOf(a),
    idempotencyKey: a.idempotencyKey,
    reason: a.reason,
    decision: a.decision
      ? { decision: a.decision.decision, by: a.decision.by, reason: a.decision.reason, at: a.decision.at }
      : null,
    waitpoint:
      a.kind === 'waitpoint' ? { onExpiry: a.onExpiry ?? 'tool_error', resultSchema: a.resultSchema ?? null } : null,
  };
}

/** A completion request as the rules take it: `completed` needs a result, `failed` an error. */
function completionOf(
  request: Req<'complete'>,
): { ok: true; value: WaitpointCompletion } | { ok: false; message: string } {
  if (request.outcome === 'completed') {
    if (request.result === undefined) return { ok: false, message: 'a completed waitpoint needs a result' };
    if (request.error !== undefined)
      return { ok: false, message: 'a completed waitpoint takes a result, not an error' };
    return { ok: true, value: { outcome: 'completed', result: request.result } };
  }
  if (request.error === undefined)
    return { ok: false, message: 'a failed waitpoint needs an error (code and message)' };
  if (request.result !== undefined) return { ok: false, message: 'a failed waitpoint takes an error, not a result' };
  return { ok: true, value: { outcome: 'failed', error: request.error } };
}
