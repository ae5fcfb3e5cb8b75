import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { HEADERS, ToolCommand } from '@ratchet/contracts';
import { PoisonMessageError } from '@ratchet/domain';
import { JetStreamContext, ServiceRuntime } from '@ratchet/platform';
import { ToolCallHandler } from './tool-call.handler';

export const TOOL_CONSUMER = 'tool-executor';

/**
 * Commands on `<prefix>.cmd.tool.<tenant>`: tool calls (run behind the effect ledger) and human
 * resolutions of uncertain effects (`tool.resolve`). Acked once the outcome is committed.
 */
@Controller()
export class ToolCallController {
  constructor(
    @Inject(ToolCallHandler) private readonly handler: ToolCallHandler,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
  ) {}

  @EventPattern(TOOL_CONSUMER)
  async onCommand(@Payload() data: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
    const command = ToolCommand.parse(data);
    // The tenant is the subject's (bound by NATS permissions), never only the body's.
    if (ctx.getSubject() !== this.runtime.subjects.toolCommands(command.tenantId)) {
      throw new PoisonMessageError(
        `${command.kind} for tenant ${command.tenantId} arrived on ${ctx.getSubject()}`,
        'tool.subject_mismatch',
      );
    }
    const trace: Record<string, string> = {};
    const traceparent = ctx.getTraceparent();
    if (traceparent) trace[HEADERS.traceparent] = traceparent;
    if (command.kind === 'tool.resolve') {
      const result = await this.handler.resolve(command, trace);
      const log = result === 'resolved' || result === 'retried' || result === 'dedup' ? 'info' : 'warn';
      this.runtime.logger[log](
        { key: command.idempotencyKey, decision: command.resolution.decision, by: command.by, result },
        'tool.resolve handled',
      );
      return;
    }
    const result = await this.handler.handle(command, trace);
    this.runtime.logger.debug({ key: command.idempotencyKey, tool: command.tool, result }, 'tool call handled');
  }
}
