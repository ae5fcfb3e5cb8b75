import type { Json } from '@ratchet/contracts';
import { isoColumn, type SqlExecutor } from './sql';

export type ApprovalKindValue = 'tool' | 'escalation' | 'waitpoint';
export type ApprovalStatusValue =
  'pending' | 'granted' | 'rejected' | 'expired' | 'resolved' | 'cancelled' | 'completed' | 'failed';
export type DecisionValue =
  'granted' | 'rejected' | 'expired' | 'happened' | 'retry' | 'fail' | 'cancelled' | 'completed' | 'failed';

export interface NewApproval {
  tenantId: string;
  id: string;
  kind: ApprovalKindValue;
  threadId: string;
  runId: string;
  step: number;
  callId: string;
  agent: string;
  tool: string;
  args: Record<string, Json>;
  argsDigest: string;
  role: string;
  fourEyes: boolean;
  requestedBy: string;
  requestedByRoles: string[];
  idempotencyKey: string | null;
  reason: string | null;
  expiresAt: string | null;
  /** The W3C traceparent the request arrived with (the run's trace); null when it came without one. */
  traceparent?: string | null;
  /** Waitpoints: what their expiry does. */
  onExpiry?: 'tool_error' | 'fail_run' | null;
  /** Waitpoints: the JSON Schema a completion's result must fit (null: any JSON). */
  resultSchema?: Record<string, Json> | null;
}

export interface ApprovalDecisionRecord {
  decision: DecisionValue;
  by: string;
  reason: string;
  result: Json | null;
  at: string;
}

export interface ApprovalRecord extends NewApproval {
  traceparent: string | null;
  onExpiry: 'tool_error' | 'fail_run' | null;
  resultSchema: Record<string, Json> | null;
  status: ApprovalStatusValue;
  requestedAt: string;
  usedBy: string | null;
  usedAt: string | null;
  decision: ApprovalDecisionRecord | null;
}

export interface ApprovalFilter {
  status?: ApprovalStatusValue | undefined;
  threadId?: string | undefined;
  agent?: string | undefined;
  /** Only approvals of these kinds (undefined: every kind). */
  kinds?: readonly ApprovalKindValue[] | undefined;
  /** Requested at or before this instant. */
  requestedBefore?: string | undefined;
  /** Only approvals that one of these roles may decide (undefined: every role). */
  roles?: readonly string[] | undefined;
  limit: number;
}

export interface AuditEntry {
  tenantId: string;
  approvalId: string;
  action: string;
  actor: string;
  argsDigest: string;
  detail?: Record<string, Json>;
}

export interface AuditRecord extends Required<AuditEntry> {
  id: number;
  at: string;
}

interface ApprovalRow {
  tenant_id: string;
  id: string;
  kind: ApprovalKindValue;
  status: ApprovalStatusValue;
  thread_id: string;
  run_id: string;
  step: number;
  call_id: string;
  agent: string;
  tool: string;
  args: Record<string, Json>;
  args_digest: string;
  role: string;
  four_eyes: boolean;
  requested_by: string;
  requested_by_roles: string[];
  idempotency_key: string | null;
  reason: string | null;
  requested_at: string;
  expires_at: string | null;
  used_by: string | null;
  used_at: string | null;
  traceparent: string | null;
  on_expiry: 'tool_error' | 'fail_run' | null;
  result_schema: Record<string, Json> | null;
  d_decision: DecisionValue | null;
  d_by: string | null;
  d_reason: string | null;
  d_result: Json | null;
  d_at: string | null;
}

/**
 * The approvals service's tables (schema `approvals`): approvals, their one decision each, and the audit
 * trail. Every read and write names the tenant: another tenant's id reads as missing (architecture §8).
 */
export class ApprovalsRepository {
  constructor(private readonly sql: SqlExecutor) {}

  private select(where: string, suffix = ''): string {
    const a = this.sql.table('approvals');
    const d = this.sql.table('decisions');
    return `select a.tenant_id, a.id, a.kind, a.status, a.thread_id, a.run_id, a.step, a.call_id, a.agent, a.tool,
        a.args, a.args_digest, a.role, a.four_eyes, a.requested_by, a.requested_by_roles, a.idempotency_key, a.reason,
        ${isoColumn('a.requested_at', 'requested_at')}, ${isoColumn('a.expires_at', 'expires_at')}, a.used_by,
        ${isoColumn('a.used_at', 'used_at')}, a.traceparent, a.on_expiry, a.result_schema, d.decision as d_decision, d.decided_by as d_by, d.reason as d_reason,
        d.result as d_result, ${isoColumn('d.decided_at', 'd_at')}
      from ${a} a left join ${d} d on d.tenant_id = a.tenant_id and d.approval_id = a.id
      where ${where} ${suffix}`;
  }

  /** Inserts the approval unless it exists (a re-sent request); true when this call created it. */
  async insert(a: NewApproval): Promise<boolean> {
    const rows = await this.sql.query<{ id: string }>(
      `insert into ${this.sql.table('approvals')} (tenant_id, id, kind, thread_id, run_id, step, call_id, agent, tool,
         args, args_digest, role, four_eyes, requested_by, requested_by_roles, idempotency_key, reason, expires_at,
         traceparent, on_expiry, result_schema)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ${
         a.requestedByRoles.length > 0 ? 'array[?]' : 'array[]'
       }::text[], ?, ?, ?::timestamptz, ?, ?, ?::jsonb)
       on conflict (tenant_id, id) do nothing
       returning id`,
      [
        a.tenantId,
        a.id,
        a.kind,
        a.threadId,
        a.runId,
        a.step,
        a.callId,
        a.agent,
        a.tool,
        JSON.stringify(a.args),
        a.argsDigest,
        a.role,
        a.fourEyes,
        a.requestedBy,
        ...(a.requestedByRoles.length > 0 ? [a.requestedByRoles] : []),
        a.idempotencyKey,
        a.reason,
        a.expiresAt,
        a.traceparent ?? null,
        a.onExpiry ?? null,
        a.resultSchema ? JSON.stringify(a.resultSchema) : null,
      ],
    );
    return rows.length === 1;
  }

  /** `forUpdate` locks the row for the rest of the transaction (decide, verify, expire serialise on it). */
  async get(tenantId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<ApprovalRecord | undefined> {
    const rows = await this.sql.query<ApprovalRow>(
      this.select('a.tenant_id = ? and a.id = ?', options.forUpdate ? 'for update of a' : ''),
      [tenantId, id],
    );
    return rows[0] && toRecord(rows[0]);
  }

  async list(tenantId: string, filter: ApprovalFilter): Promise<ApprovalRecord[]> {
    const where = ['a.tenant_id = ?'];
    const params: unknown[] = [tenantId];
    if (filter.status) {
      where.push('a.status = ?');
      params.push(filter.status);
    }
    if (filter.threadId) {
      where.push('a.thread_id = ?');
      params.push(filter.threadId);
    }
    if (filter.agent) {
      where.push('a.agent = ?');
      params.push(filter.agent);
    }
    if (filter.kinds) {
      if (filter.kinds.length === 0) return [];
      where.push('a.kind in (?)');
      params.push([...filter.kinds]);
    }
    if (filter.requestedBefore) {
      where.push('a.requested_at <= ?::timestamptz');
      params.push(filter.requestedBefore);
    }
    if (filter.roles) {
      if (filter.roles.length === 0) return [];
      where.push('a.role in (?)');
      params.push([...filter.roles]);
    }
    params.push(filter.limit);
    const rows = await this.sql.query<ApprovalRow>(
      this.select(where.join(' and '), 'order by a.requested_at, a.id limit ?'),
      params,
    );
    return rows.map(toRecord);
  }

  /**
   * Records the one decision of an approval and moves it out of `pending`. False when it was decided
   * already (by someone else, or by the expiry sweeper): nothing changes then.
   */
  async decide(
    tenantId: string,
    id: string,
    decision: DecisionValue,
    status: Exclude<ApprovalStatusValue, 'pending'>,
    by: string,
    reason: string,
    result: Json | null = null,
  ): Promise<boolean> {
    const moved = await this.sql.run(
      `update ${this.sql.table('approvals')} set status = ? where tenant_id = ? and id = ? and status = 'pending'`,
      [status, tenantId, id],
    );
    if (moved !== 1) return false;
    const rows = await this.sql.query<{ approval_id: string }>(
      `insert into ${this.sql.table('decisions')} (tenant_id, approval_id, decision, decided_by, reason, result)
       values (?, ?, ?, ?, ?, ?::jsonb)
       on conflict (tenant_id, approval_id) do nothing
       returning approval_id`,
      [tenantId, id, decision, by, reason, result === null ? null : JSON.stringify(result)],
    );
    return rows.length === 1;
  }

  /**
   * Marks a granted approval used by `usedBy` (the call it authorises). Asking again for the same use
   * answers `already` (a re-decided message after a crash or a conflict); another use answers `other`.
   */
  async markUsed(tenantId: string, id: string, usedBy: string): Promise<'used' | 'already' | 'other'> {
    const n = await this.sql.run(
      `update ${this.sql.table('approvals')} set used_by = ?, used_at = now()
       where tenant_id = ? and id = ? and used_by is null`,
      [usedBy, tenantId, id],
    );
    if (n === 1) return 'used';
    const rows = await this.sql.query<{ used_by: string | null }>(
      `select used_by from ${this.sql.table('approvals')} where tenant_id = ? and id = ?`,
      [tenantId, id],
    );
    return rows[0]?.used_by === usedBy ? 'already' : 'other';
  }

  /** Pending approvals whose expiry has passed, locked (skipping rows another sweeper holds). */
  async lockExpired(limit: number): Promise<ApprovalRecord[]> {
    const rows = await this.sql.query<ApprovalRow>(
      this.select(
        `a.status = 'pending' and a.expires_at is not null and a.expires_at <= now()`,
        'order by a.expires_at limit ? for update of a skip locked',
      ),
      [limit],
    );
    return rows.map(toRecord);
  }

  /** The pending approvals of a run, locked (closing them when the run stopped). */
  async lockPendingOfRun(tenantId: string, runId: string): Promise<ApprovalRecord[]> {
    const rows = await this.sql.query<ApprovalRow>(
      this.select(`a.tenant_id = ? and a.run_id = ? and a.status = 'pending'`, 'order by a.id for update of a'),
      [tenantId, runId],
    );
    return rows.map(toRecord);
  }

  /**
   * Pending rows by tenant (every tenant: an operator's gauge, not a tenant's view): approvals and
   * escalations waiting for a human, or waitpoints waiting for the outside world.
   */
  async pendingByTenant(
    what: 'humans' | 'waitpoints' = 'humans',
  ): Promise<Array<{ tenantId: string; pending: number }>> {
    const rows = await this.sql.query<{ tenant_id: string; pending: number }>(
      `select tenant_id, count(*)::int as pending from ${this.sql.table('approvals')}
       where status = 'pending' and ${what === 'waitpoints' ? "kind = 'waitpoint'" : "kind <> 'waitpoint'"}
       group by tenant_id`,
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, pending: Number(r.pending) }));
  }

  async audit(entry: AuditEntry): Promise<void> {
    await this.sql.run(
      `insert into ${this.sql.table('audit')} (tenant_id, approval_id, action, actor, args_digest, detail)
       values (?, ?, ?, ?, ?, ?::jsonb)`,
      [
        entry.tenantId,
        entry.approvalId,
        entry.action,
        entry.actor,
        entry.argsDigest,
        JSON.stringify(entry.detail ?? {}),
      ],
    );
  }

  async auditOf(tenantId: string, approvalId: string): Promise<AuditRecord[]> {
    const rows = await this.sql.query<{
      id: string;
      tenant_id: string;
      approval_id: string;
      action: string;
      actor: string;
      args_digest: string;
      detail: Record<string, Json>;
      at: string;
    }>(
      `select id, tenant_id, approval_id, action, actor, args_digest, detail, ${isoColumn('at')}
       from ${this.sql.table('audit')} where tenant_id = ? and approval_id = ? order by id`,
      [tenantId, approvalId],
    );
    return rows.map((r) => ({
      id: Number(r.id),
      tenantId: r.tenant_id,
      approvalId: r.approval_id,
      action: r.action,
      actor: r.actor,
      argsDigest: r.args_digest,
      detail: r.detail,
      at: r.at,
    }));
  }
}

function toRecord(r: ApprovalRow): ApprovalRecord {
  return {
    tenantId: r.tenant_id,
    id: r.id,
    kind: r.kind,
    status: r.status,
    threadId: r.thread_id,
    runId: r.run_id,
    step: Number(r.step),
    callId: r.call_id,
    agent: r.agent,
    tool: r.tool,
    args: r.args,
    argsDigest: r.args_digest,
    role: r.role,
    fourEyes: r.four_eyes,
    requestedBy: r.requested_by,
    requestedByRoles: r.requested_by_roles,
    idempotencyKey: r.idempotency_key,
    reason: r.reason,
    requestedAt: r.requested_at,
    expiresAt: r.expires_at,
    usedBy: r.used_by,
    usedAt: r.used_at,
    traceparent: r.traceparent,
    onExpiry: r.on_expiry,
    resultSchema: r.result_schema,
    decision:
      r.d_decision && r.d_by !== null && r.d_at !== null
        ? { decision: r.d_decision, by: r.d_by, reason: r.d_reason ?? '', result: r.d_result, at: r.d_at }
        : null,
  };
}
