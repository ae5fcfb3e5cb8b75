import { HEADERS, type Subjects, type ToolCallCommand, type ToolResultMessage } from '@ratchet/contracts';
import {
  EffectLedgerRepository,
  withServiceTx,
  type Database,
  type EffectRecord,
  type StartEffect,
} from '@ratchet/adapters';
import {
  PoisonMessageError,
  redactSecrets,
  type CommittedPublisher,
  type EffectKind,
  type IdSource,
  type LedgerSnapshot,
  type OutboxMessage,
  type PendingMarks,
} from '@ratchet/domain';
import { ATTR, LINK, linkActiveSpan, linkTo } from '@ratchet/platform';
import type { AnyTool, ToolLogger } from '@ratchet/tools';
import { crashPoint } from './crash-points';

export type Outcome = ToolResultMessage['outcome'];

/** Published rows one outcome's statement marks sent: at most 256, and only when at least 64 wait (as the orchestrator's decisions do). */
const MARKS_PER_OUTCOME = 256;
const MARKS_AT_LEAST = 64;

/**
 * What the executor writes once it knows how a call ended (or that it must say so again): the ledger's
 * outcome and the thread's result message, committed together, then published. Every path of the tool
 * call handler and of a human's resolution ends here, so the ledger and the thread cannot disagree.
 */
export class EffectRecorder {
  constructor(
    private readonly db: Database,
    private readonly relay: CommittedPublisher,
    private readonly subjects: Subjects,
    private readonly logger: ToolLogger,
    private readonly ids: IdSource,
    /** The relay's published rows waiting to be marked sent, taken along by each outcome's statement. */
    private readonly marks?: PendingMarks,
  ) {}

  /** Tells the thread (again) that the effect is uncertain; only a human's answer moves it on. */
  async escalate(
    command: ToolCallCommand,
    traceHeaders: Record<string, string>,
    existing: EffectRecord | undefined,
    why = `${command.tool} (${existing?.kind ?? 'at-most-once'}) cannot be repeated`,
  ): Promise<void> {
    await this.finish(
      command,
      traceHeaders,
      existing?.state === 'uncertain' ? 'resend' : 'uncertain',
      uncertain(command, `an earlier attempt of ${command.tool} stopped after it may have acted; ${why}`),
      undefined,
      undefined,
      claimOf(existing),
    );
  }

  checkTenant(command: ToolCallCommand, existing: EffectRecord | undefined): void {
    if (existing && existing.tenantId !== command.tenantId) {
      // A key is derived from the tenant, so this is a forged or corrupt command: never answer across tenants.
      throw new PoisonMessageError(
        `effect ${command.idempotencyKey} belongs to another tenant`,
        'effect.tenant_mismatch',
      );
    }
  }

  /** An earlier attempt claimed the key: this one (retry, reconcile, escalation or dedup) points at it. */
  linkToClaim(existing: EffectRecord): void {
    linkActiveSpan(
      linkTo(existing.traceparent, { [ATTR.linkReason]: LINK.ledgerClaim, [ATTR.attempt]: existing.attempts }),
    );
  }

  /**
   * Records the outcome (or the dedup hit) and the result message in one transaction, then publishes.
   * `resend`: only the message (an uncertain notice again); `dedup`: the message and a dedup hit.
   * `pure` (a pure call's row, not written yet): the row is inserted with its outcome and the message,
   * in one statement; when an outcome was already there, nothing is written or published and that row
   * is returned for the caller to re-send. Otherwise the outcome is recorded only while the row is as
   * `claim` says (compare and set): a row that moved on meanwhile is returned, and nothing is sent.
   */
  async finish(
    command: ToolCallCommand,
    traceHeaders: Record<string, string>,
    record: 'succeeded' | 'failed' | 'uncertain' | 'dedup' | 'resend',
    raw: Outcome,
    pure?: StartEffect,
    tool?: AnyTool,
    claim?: LedgerSnapshot,
  ): Promise<'recorded' | EffectRecord> {
    // Secret-looking values (and fields the tool marks sensitive) never reach the ledger or the thread.
    const outcome = redactSecrets(raw, tool?.sensitive ?? []);
    const repeat = record === 'dedup' || record === 'resend';
    const row = this.resultRow(command, traceHeaders, outcome, repeat);
    if (record === 'dedup' || record === 'resend') {
      await withServiceTx(this.db, async (tx) => {
        if (record === 'dedup') await new EffectLedgerRepository(tx).recordDedupHit(command.idempotencyKey);
        await tx.enqueue([row]);
      });
    } else {
      const result = record === 'uncertain' ? null : outcome;
      const ledger = new EffectLedgerRepository(this.db.sql);
      // The outcome and its message in one statement: one round trip, both or neither. The statement also
      // marks the rows published after earlier outcomes (its commit is needed anyway).
      if (!pure && !claim)
        throw new PoisonMessageError(
          `effect ${command.idempotencyKey}: an outcome without the claim it ends`,
          'effect.unclaimed',
        );
      const marks = this.marks?.take(MARKS_PER_OUTCOME, MARKS_AT_LEAST) ?? [];
      let recorded: 'recorded' | EffectRecord;
      try {
        recorded = pure
          ? await ledger.recordPureOutcome(pure, record, result, row, marks)
          : await ledger.recordOutcomeWithMessage(command.idempotencyKey, record, result, row, claim!, marks);
      } catch (error) {
        if (marks.length > 0) this.marks?.giveBack(marks);
        throw error;
      }
      if (recorded !== 'recorded') {
        if (!pure && claim) {
          this.logger.warn('effect moved on while this attempt acted: its outcome is dropped', {
            key: command.idempotencyKey,
            attempt: claim.attempts,
            now: recorded.state,
          });
        }
        return recorded;
      }
      await crashPoint('tools.after-outcome');
    }
    await this.relay.publishCommitted([row]);
    return 'recorded';
  }

  resultRow(
    command: ToolCallCommand,
    traceHeaders: Record<string, string>,
    outcome: Outcome,
    repeat: boolean,
  ): OutboxMessage {
    const message: ToolResultMessage = {
      kind: 'tool.result',
      // One id per outcome: a resend is deduped downstream, an uncertain notice and its later answer are not.
      messageId: `${command.idempotencyKey}:result:${outcome.status}`,
      tenantId: command.tenantId,
      threadId: command.threadId,
      runId: command.runId,
      step: command.step,
      callId: command.callId,
      outcome,
    };
    return {
      // A resend gets a row of its own (the first row may be long sent and pruned); the orchestrator's
      // inbox dedups by the message id in the body, forever.
      id:
        repeat || outcome.status === 'uncertain'
          ? `${message.messageId}:resend:${this.ids.next('r')}`
          : message.messageId,
      subject: this.subjects.inbox(command.tenantId, command.threadId),
      payload: message,
      headers: { ...traceHeaders, [HEADERS.messageType]: 'tool.result', [HEADERS.tenant]: command.tenantId },
    };
  }
}

export function recordedKind(existing: EffectRecord | undefined): EffectKind | undefined {
  const k = existing?.kind;
  return k === 'pure' || k === 'idempotent' || k === 'at-most-once' ? k : undefined;
}

/** The row as the delivery read it: what a write decided on it must still find. */
export function claimOf(existing: EffectRecord | undefined): LedgerSnapshot | undefined {
  return existing && { state: existing.state, attempts: existing.attempts };
}

export function uncertain(command: ToolCallCommand, reason: string): Outcome {
  return { status: 'uncertain', idempotencyKey: command.idempotencyKey, reason: `${reason}; a human must decide` };
}

export function storedOutcome(record: EffectRecord | undefined): Outcome {
  const stored = record?.result as Outcome | null | undefined;
  if (
    stored &&
    (stored.status === 'completed' ||
      stored.status === 'failed' ||
      stored.status === 'cancelled' ||
      stored.status === 'waiting')
  )
    return stored;
  return {
    status: 'failed',
    error: {
      code: 'ledger.missing_result',
      message: 'the effect finished but its result was not stored',
      retryable: false,
    },
  };
}
