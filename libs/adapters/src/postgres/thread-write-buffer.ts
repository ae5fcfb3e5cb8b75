import type { ThreadEvent } from '@ratchet/contracts';
import {
  baseModelCommandId,
  ConcurrencyError,
  InvariantError,
  type OutboxMessage,
  type RunRow,
  type ThreadMessages,
  type ThreadProjectionRow,
} from '@ratchet/domain';
import type { TransactionSql } from './sql';
import { GAP_MARKER, STALE_MARKER, threadWriteStatement } from './thread-write.sql';

/**
 * The write side of a thread transaction: events (with the gap guard), the projection, the `runs` rows,
 * the conversation's new messages and the outbox rows of one or several threads, buffered and sent as one
 * prepared statement (thread-write.sql.ts), which ends the transaction when it is the last.
 */

/** The queryable columns of `threads`, derived from the projection state by the caller's mapper. */
export type ThreadColumnsMapper<S> = (state: S) => { status: string; agent: string | null; activeRunId: string | null };

/** Checks what a unique index would not: the batch starts right after what the caller read, without gaps. */
export function assertContiguous(threadId: string, expectedVersion: number, events: readonly ThreadEvent[]): void {
  events.forEach((event, i) => {
    if (event.version !== expectedVersion + 1 + i) {
      throw new InvariantError(
        `thread ${threadId}: event ${event.id} has version ${event.version}, expected ${expectedVersion + 1 + i} ` +
          `(events must continue version ${expectedVersion} without a gap)`,
        'thread.version_gap',
      );
    }
  });
}

/** The rows of one transaction's writes, by table: the parameters of the thread write statement. */
interface Rows {
  claims: Array<{ consumer: string; message_id: string }>;
  appends: Array<{
    k: number;
    tenant_id: string;
    thread_id: string;
    expected: number;
    n: number;
    after_snapshot: boolean;
  }>;
  events: Array<Record<string, unknown>>;
  threads: Array<Record<string, unknown>>;
  runs: Array<Record<string, unknown>>;
  cuts: Array<{ tenant_id: string; thread_id: string; from_seq: number }>;
  messages: Array<{ tenant_id: string; thread_id: string; seq: number; message: unknown }>;
  rewritten: Array<{ tenant_id: string; thread_id: string; seq: number; message: unknown }>;
  outbox: Array<Record<string, unknown>>;
  guards: Array<{ k: number; tenant_id: string; thread_id: string; version: number }>;
  marks: string[];
  usage: Array<Record<string, unknown>>;
}

const noRows = (): Rows => ({
  claims: [],
  appends: [],
  events: [],
  threads: [],
  runs: [],
  cuts: [],
  messages: [],
  rewritten: [],
  outbox: [],
  guards: [],
  marks: [],
  usage: [],
});

/** The writes of one transaction, sent together as one prepared statement (see thread-write.sql.ts). */
export class WriteBuffer<S> {
  private rows: Rows = noRows();
  private buffered = false;
  /** Threads (`tenant\u0000thread`) with buffered writes. */
  private touched = new Set<string>();

  constructor(
    private readonly sql: TransactionSql,
    private readonly columns: ThreadColumnsMapper<S>,
  ) {}

  /** `afterSnapshot`: the batch continues a snapshot, not an event of this log (a compacted thread's import). */
  append(
    tenantId: string,
    threadId: string,
    expectedVersion: number,
    events: readonly ThreadEvent[],
    afterSnapshot = false,
  ): void {
    if (events.length === 0) return;
    assertContiguous(threadId, expectedVersion, events);
    for (const e of events) {
      if (e.tenantId !== tenantId || e.threadId !== threadId) {
        throw new InvariantError(
          `event ${e.id} belongs to ${e.tenantId}/${e.threadId}, not ${tenantId}/${threadId}`,
          'thread.foreign_event',
        );
      }
      this.rows.events.push({
        o: this.rows.events.length,
        k: this.rows.appends.length,
        tenant_id: tenantId,
        thread_id: threadId,
        version: e.version,
        id: e.id,
        type: e.type,
        v: e.v,
        run_id: e.runId ?? null,
        at: e.at,
        causation_id: e.causationId,
        correlation_id: e.correlationId,
        trace: e.trace ?? null,
        data: e.data,
      });
      // What the log says was spent, recorded with it. Only an append that continues a log decides anew: a
      // new thread's first batch holds no call of its own (a fork copies calls made and spent before).
      if (expectedVersion > 0 && !afterSnapshot) this.spent(tenantId, threadId, e);
    }
    this.rows.appends.push({
      k: this.rows.appends.length,
      tenant_id: tenantId,
      thread_id: threadId,
      expected: expectedVersion,
      n: events.length,
      after_snapshot: afterSnapshot,
    });
    this.mark(tenantId, threadId);
  }

  /**
   * A model answer's usage (`responded`), or a call the log shows made without its answer used
   * (`aborted`, tokens unknown): the worker making it stopped (its redelivery), or the answer came after
   * the run had moved on (ignored). Either may have been billed.
   */
  private spent(tenantId: string, threadId: string, e: ThreadEvent): void {
    const base = { tenant_id: tenantId, thread_id: threadId, run_id: e.runId ?? '', at: e.at };
    const aborted = (command: string, id: string) =>
      this.rows.usage.push({
        ...base,
        id,
        command_id: command,
        model: null,
        state: 'aborted',
        input_tokens: 0,
        output_tokens: 0,
        cost_micros: null,
      });
    switch (e.type) {
      case 'model.responded': {
        const command = baseModelCommandId(e.data.commandId);
        this.rows.usage.push({
          ...base,
          id: command,
          command_id: command,
          model: e.data.model,
          state: 'responded',
          input_tokens: e.data.usage.inputTokens,
          output_tokens: e.data.usage.outputTokens,
          cost_micros: e.data.usage.costMicros ?? null,
        });
        return;
      }
      case 'model.requested': {
        const delivery = e.data.delivery;
        if (delivery === undefined || delivery <= 1) return;
        const command = baseModelCommandId(e.data.commandId);
        aborted(command, `${command}:aborted:${delivery - 1}`);
        return;
      }
      case 'result.ignored': {
        const answered = e.data.outcome === 'ok' || e.data.outcome === 'error:timeout';
        if (e.data.kind !== 'model.result' || !answered) return;
        const command = baseModelCommandId(e.data.ref);
        aborted(command, `${command}:ignored:${e.id}`);
        return;
      }
      default:
        return;
    }
  }

  project(row: ThreadProjectionRow<S>, runs: readonly RunRow[], messages?: ThreadMessages): void {
    const c = this.columns(row.state);
    this.rows.threads.push({
      tenant_id: row.tenantId,
      thread_id: row.threadId,
      version: row.version,
      status: c.status,
      agent: c.agent,
      active_run_id: c.activeRunId,
      state: row.state,
    });
    for (const r of runs) {
      this.rows.runs.push({
        tenant_id: r.tenantId,
        run_id: r.runId,
        thread_id: r.threadId,
        request_id: r.requestId,
        agent: r.agent,
        agent_version: r.agentVersion,
        principal_id: r.principalId,
        status: r.status,
        steps: r.steps,
        started_at: r.startedAt,
        ended_at: r.endedAt,
        version: r.version,
        request_digest: r.requestDigest,
        outcome: r.outcome,
        waiting_on: r.waiting?.on ?? null,
        waiting_since: r.waiting?.since ?? null,
        waiting_until: r.waiting?.until ?? null,
        slot_keys: r.slotKeys ?? null,
        waiting_for: r.waiting?.for ?? null,
        queued_until: r.queuedUntil ?? null,
        priority: r.priority ?? 0,
        throttle_key: r.throttleKey ?? null,
        debounce_key: r.debounceKey ?? null,
      });
    }
    if (messages) {
      // A whole conversation (a rebuild) is upserted, and the rows past its end removed; new messages are
      // appended (a number taken already is a unique violation, i.e. a conflict).
      const into = messages.whole ? this.rows.rewritten : this.rows.messages;
      if (messages.whole) {
        this.rows.cuts.push({
          tenant_id: row.tenantId,
          thread_id: row.threadId,
          from_seq: messages.from + messages.messages.length,
        });
      }
      messages.messages.forEach((message, i) =>
        into.push({ tenant_id: row.tenantId, thread_id: row.threadId, seq: messages.from + i, message }),
      );
    }
    this.mark(row.tenantId, row.threadId);
  }

  /**
   * Claims an inbox message together with the writes, for a decision made on a state the caller already
   * had (it did not read the thread in this transaction): the statement fails — nothing is committed —
   * if the message was claimed before (a unique violation) or the thread's projection is no longer at
   * `version` (another writer moved it). The caller then decides again from the database.
   */
  claimOnWrite(consumer: string, messageId: string, tenantId: string, threadId: string, version: number): void {
    this.rows.claims.push({ consumer, message_id: messageId });
    this.rows.guards.push({ k: this.rows.guards.length, tenant_id: tenantId, thread_id: threadId, version });
    this.mark(tenantId, threadId);
  }

  /** Whether writes to this thread are buffered (a read of its rows must flush them first). */
  touches(tenantId: string, threadId: string): boolean {
    return this.touched.has(threadKey(tenantId, threadId));
  }

  enqueue(messages: readonly OutboxMessage[]): void {
    for (const m of messages) {
      this.rows.outbox.push({
        o: this.rows.outbox.length,
        id: m.id,
        subject: m.subject,
        headers: m.headers,
        payload: m.storedPayload ?? m.payload,
        // A leased row is available to the sweeper only from now + leaseMs (its holder runs it); a delayed
        // one from notBefore; any other at once.
        lease_ms: m.leaseMs ?? null,
        leased_by: m.leaseMs !== undefined ? (m.leasedBy ?? null) : null,
        not_before: m.notBefore ?? null,
      });
    }
    if (messages.length > 0) this.buffered = true;
  }

  /**
   * Outbox rows to mark sent with the next flush that writes (they never cause a flush of their own: a
   * statement of only marks is the relay's, without waiting for the WAL).
   */
  markSent(ids: readonly string[]): void {
    this.rows.marks.push(...ids);
  }

  /**
   * Sends the buffered writes as one statement; with `commit`, the transaction ends with it (when it is
   * the transaction's only statement, it runs on its own and commits as it completes: one round trip). A
   * gap before an appended batch, or a guarded thread that moved on, is detected inside the statement (it
   * raises), so nothing is committed when one is found.
   */
  async flush(commit = false): Promise<void> {
    // Nothing buffered: the transaction commits on its own (one round trip either way). Marks alone wait
    // for the writes a read flushes first, and go with the last flush however it ends.
    if (!this.buffered && !(commit && this.rows.marks.length > 0)) return;
    const rows = this.rows;
    this.rows = noRows();
    this.buffered = false;
    this.touched = new Set();
    const { name, text } = threadWriteStatement(this.sql);
    const values = [
      rows.claims,
      rows.appends,
      rows.events,
      rows.threads,
      rows.runs,
      rows.cuts,
      rows.messages,
      rows.rewritten,
      rows.outbox,
      rows.guards,
      rows.marks,
      rows.usage,
    ].map((r) => JSON.stringify(r));
    try {
      await this.sql.queryPrepared(name, text, values, commit);
    } catch (error) {
      // Another writer took one of these versions (or message numbers) first: it waited for that writer's
      // commit, then failed.
      const first = rows.appends[0];
      if (
        first &&
        (isUniqueViolation(error, 'thread_events_pkey') || isUniqueViolation(error, 'thread_messages_pkey'))
      ) {
        throw new ConcurrencyError(first.thread_id, first.expected, { cause: error });
      }
      const stale = markedIndex(error, STALE_MARKER);
      const g = stale === undefined ? undefined : rows.guards[stale];
      if (g) throw new ConcurrencyError(g.thread_id, g.version, { cause: error });
      const gap = markedIndex(error, GAP_MARKER);
      const a = gap === undefined ? undefined : rows.appends[gap];
      if (a) {
        throw new InvariantError(
          `thread ${a.thread_id}: cannot append after version ${a.expected}, the log does not reach it`,
          'thread.log_behind',
          { cause: error },
        );
      }
      throw error;
    }
  }

  private mark(tenantId: string, threadId: string): void {
    this.buffered = true;
    this.touched.add(threadKey(tenantId, threadId));
  }
}

/** Which append or guard failed, from the error its check raised (`<marker><k>:…`). */
function markedIndex(error: unknown, marker: string): number | undefined {
  const e = error as { code?: unknown; message?: unknown };
  if (e.code !== '22P02' || typeof e.message !== 'string') return undefined;
  const at = e.message.indexOf(marker);
  if (at < 0) return undefined;
  const n = Number.parseInt(e.message.slice(at + marker.length), 10);
  return Number.isNaN(n) ? undefined : n;
}

function isUniqueViolation(error: unknown, constraint: string): boolean {
  const e = error as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && e.constraint === constraint;
}

function threadKey(tenantId: string, threadId: string): string {
  return `${tenantId}\u0000${threadId}`;
}
