import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JetStreamPublisher } from '@ratchet/adapters';
import { HEADERS, ModelCallCommand, type ModelAttemptMessage } from '@ratchet/contracts';
import { JetStreamContext, ServiceRuntime } from '@ratchet/platform';
import { ModelWorker } from './model-worker';

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
  ) {
    this.publisher = new JetStreamPublisher(runtime.nc.jetstream());
  }

  @EventPattern(MODEL_CONSUMER)
  async onCommand(@Payload() data: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
    const command = ModelCallCommand.parse(data);
    const headers: Record<string, string> = { [HEADERS.tenant]: command.tenantId };
    const traceparent = ctx.getTraceparent();
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
    const result = await this.worker.call(command);
    await this.publisher.publish(inbox, result, {
      msgId: result.messageId,
      headers: { ...headers, [HEADERS.messageType]: 'model.result' },
    });
  }
}
