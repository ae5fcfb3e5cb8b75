import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { JetStreamPublisher } from '@ratchet/adapters';
import { HEADERS, ModelCallCommand } from '@ratchet/contracts';
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
    const result = await this.worker.call(command);
    const headers: Record<string, string> = {
      [HEADERS.messageType]: 'model.result',
      [HEADERS.tenant]: command.tenantId,
    };
    const traceparent = ctx.getTraceparent();
    if (traceparent) headers[HEADERS.traceparent] = traceparent;
    await this.publisher.publish(this.runtime.subjects.inbox(command.tenantId, command.threadId), result, {
      msgId: result.messageId,
      headers,
    });
  }
}
