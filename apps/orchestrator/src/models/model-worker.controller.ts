import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JetStreamPublisher, MemoryClient } from '@ratchet/adapters';
import { HEADERS, ModelCallCommand, type ModelAttemptMessage } from '@ratchet/contracts';
import { currentTraceContext, JetStreamContext, ServiceRuntime } from '@ratchet/platform';
import { ModelWorker } from './model-worker';
import { MemoryRecall, runPrincipalFromProjection } from './memory-recall';

export const MODEL_CONSUMER = 'model-worker';
/** How long a recall waits for the memory service before the model is called without it. */
export const RECALL_TIMEOUT_MS = 2000;

/**
 * Consumes model-call commands and publishes each result to the thread inbox before acking. A crash in
 * between means a redelivery and a second call; the result's message id makes the duplicate harmless.
 */
@Controller()
export class ModelWorkerController {
  private readonly publisher: JetStreamPublisher;
  private readonly recall: MemoryRecall;

  constructor(
    @Inject(ModelWorker) private readonly worker: ModelWorker,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
  ) {
    this.publisher = new JetStreamPublisher(runtime.nc.jetstream());
    // A short wait: a memory service that does not answer delays the model call by at most this, then
    // the call goes ahead without recall.
    this.recall = new MemoryRecall(
      new MemoryClient(runtime.nc, { subjectPrefix: runtime.subjects.prefix, timeoutMs: RECALL_TIMEOUT_MS }),
      runPrincipalFromProjection(runtime.db.sql),
      runtime.logger.child({ component: 'memory-recall' }),
    );
  }

  @EventPattern(MODEL_CONSUMER)
  async onCommand(@Payload() data: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
    const command = ModelCallCommand.parse(data);
    const headers: Record<string, string> = { [HEADERS.tenant]: command.tenantId };
    // This consumer's span (telemetry on) or the command's own context: the result joins the run's trace.
    const traceparent = currentTraceContext()?.traceparent ?? ctx.getTraceparent();
    if (traceparent) headers[HEADERS.traceparent] = traceparent;
    const inbox = this.runtime.subjects.inbox(command.tenantId, command.threadId);
    if (ctx.getDeliveryCount() > 1) {
      // An earlier worker took this command and never answered: the thread's log shows the new attempt.
      const attempt: ModelAttemptMessage = {
        kind: 'model.attempt',
        messageId: `${command.commandId}:delivery:${ctx.getDeliveryCount()}`,
        tenantId: command.tenantId,
        threadId: command.threadId,
        runId: command.runId,
        commandId: command.commandId,
        delivery: ctx.getDeliveryCount(),
        worker: this.runtime.config.SERVICE_INSTANCE_ID,
      };
      await this.publisher.publish(inbox, attempt, {
        msgId: attempt.messageId,
        headers: { ...headers, [HEADERS.messageType]: 'model.attempt' },
      });
    }
    const result = await this.worker.call(command, undefined, this.recall);
    // The answer names its delivery too: the thread records the attempt even if it applies the answer
    // before the notice above (the inbox handles messages of one thread concurrently).
    if (ctx.getDeliveryCount() > 1) {
      result.delivery = ctx.getDeliveryCount();
      result.worker = this.runtime.config.SERVICE_INSTANCE_ID;
    }
    await this.publisher.publish(inbox, result, {
      msgId: result.messageId,
      headers: { ...headers, [HEADERS.messageType]: 'model.result' },
    });
  }
}
