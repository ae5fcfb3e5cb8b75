import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JetStreamPublisher } from '@ratchet/adapters';
import { HEADERS, ModelCallCommand, type ModelAttemptMessage } from '@ratchet/contracts';
import { currentTraceContext, JetStreamContext, ServiceRuntime } from '@ratchet/platform';
import { ModelWorker } from './model-worker';
import { MemoryRecall } from './memory-recall';

export const MODEL_CONSUMER = 'model-worker';

/**
 * Consumes model-call commands and publishes each result to the thread inbox before acking. A crash in
 * between means a redelivery and a second call; the result's message id makes the duplicate harmless.
 */
@Controller()
export class ModelWorkerController {
  private readonly publisher: JetStreamPublisher;

  constructor(
    @Inject(ModelWorker) private readonly worker: ModelWorker,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Inject(MemoryRecall) private readonly recall: MemoryRecall,
  ) {
    this.publisher = new JetStreamPublisher(runtime.nc);
  }

  @EventPattern(MODEL_CONSUMER)
  async onCommand(@Payload() data: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
    const command = ModelCallCommand.parse(data);
    const headers: Record<string, string> = { [HEADERS.tenant]: command.tenantId };
    // This consumer's span (telemetry on) or the command's own context: the result joins the run's trace.
    const traceparent = currentTraceContext()?.traceparent ?? ctx.getTraceparent();
    if (traceparent) headers[HEADERS.traceparent] = traceparent;
    const inbox = this.runtime.subjects.inbox(command.tenantId, command.threadId);
    // A command whose lease ran out was taken by an orchestrator that died in the call (it ran the call
    // itself, see LocalModelDispatch): this delivery is its retry.
    const delivery = ctx.getDeliveryCount() + (ctx.getHeader(HEADERS.leaseExpired) ? 1 : 0);
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
    const result = await this.worker.call(command, undefined, this.recall);
    // The answer names its delivery too: the thread records the attempt even if it applies the answer
    // before the notice above (the inbox handles messages of one thread concurrently).
    if (delivery > 1) {
      result.delivery = delivery;
      result.worker = this.runtime.config.SERVICE_INSTANCE_ID;
    }
    await this.publisher.publish(inbox, result, {
      msgId: result.messageId,
      headers: { ...headers, [HEADERS.messageType]: 'model.result' },
    });
  }
}
