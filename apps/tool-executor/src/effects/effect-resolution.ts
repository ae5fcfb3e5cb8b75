import { ToolCallCommand, type ToolResolveCommand } from '@ratchet/contracts';
import { EffectLedgerRepository, withServiceTx, type Database } from '@ratchet/adapters';
import type { CommittedPublisher, LedgerSnapshot } from '@ratchet/domain';
import type { AnyTool, ToolLookup } from '@ratchet/tools';
import { storedOutcome, type EffectRecorder, type Outcome } from './effect-recorder';

export type ToolResolveResult = 'resolved' | 'retried' | 'dedup' | 'not-found' | 'not-uncertain';

/** Runs a call again as the attempt `claim` holds (a human's `retry`). */
export type RetryClaimed = (
  call: ToolCallCommand,
  traceHeaders: Record<string, string>,
  tool: AnyTool | undefined,
  claim: LedgerSnapshot,
) => Promise<unknown>;

/** A human's answer to an `uncertain` effect (`ratchet effects resolve`, the console, the API). */
export class EffectResolution {
  constructor(
    private readonly db: Database,
    private readonly tools: ToolLookup,
    private readonly relay: CommittedPublisher,
    private readonly record: EffectRecorder,
    private readonly retry: RetryClaimed,
  ) {}

  /**
   * A human's answer to an `uncertain` effect. Recorded in the ledger only while the effect is still
   * `uncertain` (a repeated or late answer changes nothing, and re-sends what the ledger holds).
   */
  async resolve(command: ToolResolveCommand, traceHeaders: Record<string, string>): Promise<ToolResolveResult> {
    const ledger = new EffectLedgerRepository(this.db.sql);
    const record = await ledger.get(command.idempotencyKey);
    // Another tenant's key reads as missing (architecture §8).
    if (!record || record.tenantId !== command.tenantId) return 'not-found';
    const call = ToolCallCommand.safeParse(record.command);
    if (!call.success) return 'not-found';
    if (record.state !== 'uncertain') {
      if (record.state === 'started') return 'not-uncertain';
      await this.record.finish(call.data, traceHeaders, 'dedup', storedOutcome(record));
      return 'dedup';
    }
    const r = command.resolution;
    if (r.decision === 'retry') {
      const claim = await withServiceTx(this.db, (tx) =>
        new EffectLedgerRepository(tx).recordResolution(command.tenantId, command.idempotencyKey, 'retry', command.by),
      );
      if (!claim) return 'not-uncertain';
      // Back to `started` with one more attempt, committed before it runs again: a crash now escalates again.
      await this.retry(call.data, traceHeaders, await this.tools.resolve(command.tenantId, record.tool), claim);
      return 'retried';
    }
    const outcome: Outcome =
      r.decision === 'happened'
        ? { status: 'completed', result: r.result }
        : {
            status: 'failed',
            error: {
              code: 'effect.failed_by_human',
              message: `${record.tool}: ${command.by} decided the call failed${r.reason ? `: ${r.reason}` : ''}`,
              retryable: false,
            },
          };
    const row = this.record.resultRow(call.data, traceHeaders, outcome, false);
    const ok = await withServiceTx(this.db, async (tx) => {
      const done = await new EffectLedgerRepository(tx).recordResolution(
        command.tenantId,
        command.idempotencyKey,
        r.decision,
        command.by,
        outcome,
      );
      if (done) await tx.enqueue([row]);
      return done !== undefined;
    });
    if (!ok) return 'not-uncertain';
    await this.relay.publishCommitted([row]);
    return 'resolved';
  }

  /**
   * Runs the tool and records what came of it. Without `pure`, the ledger says `started` (committed
   * before this runs). With `pure` (the call's ledger row, not written yet), the outcome is recorded
   * with the row in one statement; when another delivery recorded an outcome first, that one is re-sent
   * and this one dropped (a pure tool may repeat; its result reaches the thread once). Without `pure`,
   * `claim` is the row as this attempt holds it: its outcome is recorded only while it still does.
   */
}
