import { Controller, Inject } from '@nestjs/common';
import { Ctx } from '@nestjs/microservices';
import { HEADERS, ToolCommand } from '@ratchet/contracts';
import {
  ATTR,
  ConsumesOnItsSubject,
  currentTraceContext,
  inSpan,
  JetStreamContext,
  meter,
  ServiceRuntime,
  SPAN,
  toolCallAttributes,
  toolDuration,
} from '@ratchet/platform';
import type { Counter } from '@opentelemetry/api';
import { ToolCallHandler } from './tool-call.handler';

let metrics: { dedupHits: Counter; escalations: Counter } | undefined;
/** Effect-ledger dedup hits and escalations, as OTLP metrics (latency: `toolDuration()`). */
function toolMetrics() {
  return (metrics ??= {
    dedupHits: meter().createCounter('ratchet.tool.dedup_hits', {
      description: 'Deliveries answered from the effect ledger',
    }),
    escalations: meter().createCounter('ratchet.tool.escalations', {
      description: 'Effects marked uncertain for a human',
    }),
  });
}

let abandoned: Counter | undefined;
/** Tool attempts given up on because they did not settle after their abort (`/metrics`: `ratchet_tool_abandoned_attempts_total`). */
export function abandonedAttemptsCounter(): Counter {
  return (abandoned ??= meter().createCounter('ratchet.tool.abandoned_attempts', {
    description: 'Tool attempts that did not settle within the grace period after their timeout or stop',
  }));
}

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

  @ConsumesOnItsSubject(TOOL_CONSUMER, ToolCommand, (s) => s.toolCommands, 'tool')
  async onCommand(command: ToolCommand, @Ctx() ctx: JetStreamContext): Promise<void> {
    const trace: Record<string, string> = {};
    // This consumer's span (telemetry on) or the command's context: the result joins the run's trace.
    const traceparent = currentTraceContext()?.traceparent ?? ctx.getTraceparent();
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
    const started = performance.now();
    const result = await inSpan(SPAN.toolExecute(command.tool), toolCallAttributes(command), async (span) => {
      const r = await this.handler.handle(command, trace, ctx.getDeliveryCount());
      // executed / dedup / retried / reconciled / escalated: what the effect ledger decided.
      span.setAttribute(ATTR.ledgerDecision, r);
      return r;
    });
    toolDuration().record(performance.now() - started, { tool: command.tool, decision: result });
    if (result === 'dedup') toolMetrics().dedupHits.add(1, { tool: command.tool });
    if (result === 'escalated') toolMetrics().escalations.add(1, { tool: command.tool });
    this.runtime.logger.debug({ key: command.idempotencyKey, tool: command.tool, result }, 'tool call handled');
  }
}
