import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JetStreamPublisher, ModelCallLeases } from '@ratchet/adapters';
import { HEADERS, ModelCallCommand, type ModelAttemptMessage } from '@ratchet/contracts';
import { currentTraceContext, JetStreamContext, RunStoppedError, ServiceRuntime } from '@ratchet/platform';
import { TransientError } from '@ratchet/domain';
import { ModelWorker } from './model-worker';
import { MemoryRecall } from './memory-recall';
import { waitUntil } from './abortable-wait';
import { LeaseLostError, ModelCalls } from './model-calls';

export const MODEL_CONSUMER = 'model-worker';

/**
 * Consumes model-call commands and publishes each result to the thread inbox before acking. Before it
 * calls the model it claims the call's outbox row: a call the thread no longer waits for (answered,
 * replaced, its run ended, fenced by the watchdog) is acked and not made; a copy of a call another
 * worker holds is looked at again when that worker's lease runs out. A crash after the claim means a redelivery, which waits for the dead holder's
 * lease to run out (nak'ed until then), and the next attempt; the result's message id makes a duplicate
 * answer harmless.
 */
@Controller()
export class ModelWorkerController {
  private readonly publisher: JetStreamPublisher;
  private readonly leases: ModelCallLeases;

  constructor(
    @Inject(ModelWorker) private readonly worker: ModelWorker,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Inject(MemoryRecall) private readonly recall: MemoryRecall,
    @Inject(ModelCalls) private readonly calls: ModelCalls,
  ) {
    this.publisher = new JetStreamPublisher(runtime.nc);
    this.leases = new ModelCallLeases(runtime.db.sql);
  }

  @EventPattern(MODEL_CONSUMER)
  async onCommand(@Payload() data: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
    const command = ModelCallCommand.parse(data);
    const log = this.runtime.logger;
    const row = ctx.getHeader(HEADERS.msgId) ?? command.commandId;
    // A command whose lease ran out was taken by an orchestrator that died in the call (it ran the call
    // itself, see LocalModelDispatch): this delivery is its retry.
    const leaseExpired = ctx.getHeader(HEADERS.leaseExpired) !== undefined;
    let delivery = ctx.getDeliveryCount() + (leaseExpired ? 1 : 0);
    // What says whether the model may have been asked is the row's claim, not the delivery count: a worker
    // claims the row before it calls. A first delivery of a row some worker already claimed is a retry all
    // the same (a copy published again after its publisher died before marking it sent); a later delivery
    // of a row nobody ever claimed is not (it was deferred by a worker's fair shares, or handed back before
    // its claim), so a tenant's calls waiting their turn never use up its attempts (ADR 0033).
    const lease = await this.leases.leaseOf(row);
    delivery = deliveryOf(delivery, lease, leaseExpired);
    const claim = await this.leases.claim(
      { id: row, tenantId: command.tenantId, threadId: command.threadId, commandId: command.commandId },
      this.calls.holder,
      this.calls.leaseMs,
      { redelivery: delivery > 1 },
    );
    // Held by a live worker or by one that died inside its lease: looked at again once the lease has run
    // out, never acked while it runs — this copy may be the only one left (see heldElsewhere).
    if (claim === 'held') await this.heldElsewhere(row);
    if (claim === 'stale' || claim === 'held' || claim === 'fenced') {
      log.info({ commandId: command.commandId, claim }, 'model call not made: the thread no longer waits for it here');
      return;
    }
    const headers: Record<string, string> = { [HEADERS.tenant]: command.tenantId };
    // This consumer's span (telemetry on) or the command's own context: the result joins the run's trace.
    const traceparent = currentTraceContext()?.traceparent ?? ctx.getTraceparent();
    if (traceparent) headers[HEADERS.traceparent] = traceparent;
    const inbox = this.runtime.subjects.inbox(command.tenantId, command.threadId);
    if (delivery > 1) {
      // An earlier worker took this command and never answered: the thread's log shows the new attempt.
      const attempt: ModelAttemptMessage = {
        kind: 'model.attempt',
        messageId: `${command.commandId}:delivery:${delivery}`,
        tenantId: command.tenantId,
        threadId: command.threadId,
        runId: command.runId,
        commandId: command.commandId,
        delivery,
        worker: this.runtime.config.SERVICE_INSTANCE_ID,
      };
      await this.publisher.publish(inbox, attempt, {
        msgId: attempt.messageId,
        headers: { ...headers, [HEADERS.messageType]: 'model.attempt' },
      });
    }
    if (claim === 'over-budget') {
      // No call: the notice above makes the decider fail the run on its model-call budget.
      log.info({ commandId: command.commandId }, 'model call not made: the run has no model calls left in its budget');
      return;
    }
    const owner = {
      tenantId: command.tenantId,
      runId: command.runId,
      leasedRow: claim === 'claimed' ? row : undefined,
    };
    const result = await this.calls
      .run(owner, async (signal) => {
        await waitUntil(command.notBefore, signal);
        const answer = await this.worker.call(command, signal, this.recall, delivery);
        return signal.reason instanceof LeaseLostError ? undefined : answer;
      })
      .catch((error: unknown) => {
        // Stopped or replaced while it waited out its backoff: no call was made, nothing to answer.
        if (error instanceof LeaseLostError || error instanceof RunStoppedError) return undefined;
        throw error;
      });
    if (!result) {
      log.info({ commandId: command.commandId }, 'model call given up: this worker no longer holds it');
      return;
    }
    // The answer names its delivery too: the thread records the attempt even if it applies the answer
    // before the notice above (the inbox handles messages of one thread concurrently).
    if (delivery > 1) {
      result.delivery = delivery;
      result.worker = this.runtime.config.SERVICE_INSTANCE_ID;
    }
    // The answer, or (a provider limit had no room) the wait the thread commands the call again after.
    await this.publisher.publish(inbox, result, {
      msgId: result.messageId,
      headers: { ...headers, [HEADERS.messageType]: result.kind },
    });
  }

  /**
   * A command whose row another worker's lease still holds. Acking it could leave the call to the
   * watchdog's lost-call bound (10 minutes by default):
   * - a redelivery is most likely the holder's own message, back because the holder died before its
   *   lease ran out (a live holder keeps its message: it heartbeats);
   * - a first delivery may be the only copy there is: an orchestrator running the call itself paused past
   *   its lease, a sweeper published the row and marked it sent, then the holder renewed its lapsed lease
   *   (nobody had taken it) — if that holder dies now, no sweeper publishes the row again.
   * It comes back once the lease has run out (the nak's delay), and is claimed then unless the holder
   * renewed it meanwhile; once the holder has answered, the claim finds it stale and it is acked. The
   * delay is not an attempt: only the delivery that claims the row calls the model.
   */
  private async heldElsewhere(row: string): Promise<void> {
    const lease = await this.leases.leaseOf(row);
    if (!lease || !Number.isFinite(lease.leftMs)) return;
    throw new TransientError(
      `model call ${row} is held by ${lease.holder ?? 'another worker'}; looking again when its lease runs out`,
      'model.in_progress',
      { retryAfterMs: lease.leftMs + LEASE_SLACK_MS },
    );
  }
}

/**
 * The delivery a model call counts as: 2 and more is a retry (the model may have been asked before). A
 * row some worker claimed makes a first delivery a retry; a row no worker claimed (and whose lease did not
 * run out on a holder) makes any delivery the first. Without a row (pruned), the bus's count stands.
 */
export function deliveryOf(
  counted: number,
  lease: { holder: string | null } | undefined,
  leaseExpired: boolean,
): number {
  if (!lease) return counted;
  if (lease.holder) return Math.max(counted, 2);
  return leaseExpired ? counted : 1;
}

/** How long after a lease's end a held call is looked at again (the holder's clock and the database's). */
const LEASE_SLACK_MS = 500;
