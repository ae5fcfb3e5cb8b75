import { HEADERS, type Subjects, type ToolCallCommand, type ToolResultMessage } from '@ratchet/contracts';
import { EffectLedgerRepository, withServiceTx, type Database, type EffectRecord } from '@ratchet/adapters';
import { decideEffect, type OutboxMessage } from '@ratchet/domain';
import type { ToolLogger, ToolRegistry } from '@ratchet/tools';
import { runTool, type ToolRunOutcome } from './run-tool';

export interface Relay {
  flush(ids: string[]): Promise<unknown>;
}

export type ToolCallResult = 'executed' | 'dedup' | 'retried' | 'escalated' | 'reconciled';

/**
 * The effect ledger around every tool call (ARCHITECTURE §6). `started` is committed before the tool
 * acts; the outcome and the result message commit together afterwards. A redelivery reads the ledger
 * and never blindly repeats an effect that may have happened.
 */
export class ToolCallHandler {
  constructor(
    private readonly db: Database,
    private readonly tools: ToolRegistry,
    private readonly relay: Relay,
    private readonly subjects: Subjects,
    private readonly logger: ToolLogger,
  ) {}

  async handle(command: ToolCallCommand, traceHeaders: Record<string, string>): Promise<ToolCallResult> {
    const tool = this.tools.get(command.tool);
    const kind = tool?.kind ?? 'pure';
    const start = {
      key: command.idempotencyKey,
      tenantId: command.tenantId,
      threadId: command.threadId,
      runId: command.runId,
      callId: command.callId,
      tool: command.tool,
      kind,
    };
    // 1. Claim the key (committed on its own: the claim must be durable before anything acts).
    const claimed = await withServiceTx(this.db, (tx) => new EffectLedgerRepository(tx).recordStarted(start));
    const existing: EffectRecord | undefined = claimed === 'inserted' ? undefined : claimed;
    const action = decideEffect(existing?.state, kind, tool?.reconcile !== undefined);

    switch (action) {
      case 'resend': {
        await this.finish(command, traceHeaders, undefined, storedOutcome(existing));
        return 'dedup';
      }
      case 'escalate': {
        await this.finish(command, traceHeaders, existing?.state === 'uncertain' ? undefined : 'uncertain', {
          status: 'uncertain',
          idempotencyKey: command.idempotencyKey,
          reason: `an earlier attempt of ${command.tool} (at-most-once) stopped after it may have acted; a human must decide`,
        });
        return 'escalated';
      }
      case 'reconcile': {
        if (!tool?.reconcile) throw new Error('unreachable: reconcile without a hook');
        const answer = await tool.reconcile(command.args, this.context(command));
        if (answer.happened) {
          await this.finish(command, traceHeaders, 'succeeded', { status: 'completed', result: answer.result });
          return 'reconciled';
        }
        await withServiceTx(this.db, (tx) => new EffectLedgerRepository(tx).recordAttempt(command.idempotencyKey));
        break;
      }
      case 'retry':
        await withServiceTx(this.db, (tx) => new EffectLedgerRepository(tx).recordAttempt(command.idempotencyKey));
        break;
      case 'execute':
        break;
    }

    const outcome: ToolRunOutcome = tool
      ? await runTool(tool, command, this.logger)
      : {
          status: 'failed',
          error: { code: 'unknown_tool', message: `no tool named ${command.tool} is registered`, retryable: false },
        };
    await this.finish(command, traceHeaders, outcome.status === 'completed' ? 'succeeded' : 'failed', outcome);
    return action === 'execute' ? 'executed' : action === 'reconcile' ? 'reconciled' : 'retried';
  }

  /** Records the outcome (unless only re-sending) and the result message in one transaction, then publishes. */
  private async finish(
    command: ToolCallCommand,
    traceHeaders: Record<string, string>,
    record: 'succeeded' | 'failed' | 'uncertain' | undefined,
    outcome: ToolResultMessage['outcome'],
  ): Promise<void> {
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
    const row: OutboxMessage = {
      // A resend gets a row of its own (the first row may be long sent and pruned); the orchestrator's
      // inbox dedups by the message id in the body, forever.
      id: record ? message.messageId : `${message.messageId}:resend:${Date.now()}`,
      subject: this.subjects.inbox(command.tenantId, command.threadId),
      payload: message,
      headers: { ...traceHeaders, [HEADERS.messageType]: 'tool.result', [HEADERS.tenant]: command.tenantId },
    };
    await withServiceTx(this.db, async (tx) => {
      if (record)
        await new EffectLedgerRepository(tx).recordOutcome(
          command.idempotencyKey,
          record,
          record === 'uncertain' ? null : outcome,
        );
      await tx.enqueue([row]);
    });
    await this.relay.flush([row.id]).catch(() => undefined);
  }

  private context(command: ToolCallCommand) {
    return {
      idempotencyKey: command.idempotencyKey,
      tenantId: command.tenantId,
      threadId: command.threadId,
      runId: command.runId,
      callId: command.callId,
      principal: command.principal,
      signal: new AbortController().signal,
      logger: this.logger,
    };
  }
}

function storedOutcome(record: EffectRecord | undefined): ToolResultMessage['outcome'] {
  const stored = record?.result as ToolResultMessage['outcome'] | null | undefined;
  if (stored && (stored.status === 'completed' || stored.status === 'failed')) return stored;
  return {
    status: 'failed',
    error: {
      code: 'ledger.missing_result',
      message: 'the effect finished but its result was not stored',
      retryable: false,
    },
  };
}
