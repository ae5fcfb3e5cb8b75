import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { HEADERS, ToolCallCommand } from '@ratchet/contracts';
import { PoisonMessageError } from '@ratchet/domain';
import { JetStreamContext, ServiceRuntime } from '@ratchet/platform';
import { ToolCallHandler } from './tool-call.handler';

export const TOOL_CONSUMER = 'tool-executor';

/** Tool-call commands: parse, run behind the effect ledger, ack once the outcome is committed. */
@Controller()
export class ToolCallController {
  constructor(
    @Inject(ToolCallHandler) private readonly handler: ToolCallHandler,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
  ) {}

  @EventPattern(TOOL_CONSUMER)
  async onCommand(@Payload() data: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
    const command = ToolCallCommand.parse(data);
    if (ctx.getSubject() !== this.runtime.subjects.toolCommands(command.tenantId)) {
      throw new PoisonMessageError(
        `tool call for tenant ${command.tenantId} arrived on ${ctx.getSubject()}`,
        'tool.subject_mismatch',
      );
    }
    const trace: Record<string, string> = {};
    const traceparent = ctx.getTraceparent();
    if (traceparent) trace[HEADERS.traceparent] = traceparent;
    const result = await this.handler.handle(command, trace);
    this.runtime.logger.debug({ key: command.idempotencyKey, tool: command.tool, result }, 'tool call handled');
  }
}
