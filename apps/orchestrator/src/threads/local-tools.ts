import { HEADERS, type Json, type ToolCallCommand, type ToolResultMessage } from '@ratchet/contracts';
import { redactSecrets, type OutboxMessage } from '@ratchet/domain';
import type { LocalToolRunner } from '@ratchet/engine';
import { ATTR, failpoint, inSpan, SPAN, toolCallAttributes, toolDuration } from '@ratchet/platform';
import { runTool, type AnyTool, type ToolLogger, type ToolRegistry } from '@ratchet/tools';

/** What a local tool call's span says where the executor's says what the effect ledger decided. */
export const LOCAL_TOOL_DECISION = 'local';

/**
 * Runs `local` tools (pure, cheap, no I/O; see `ToolDefinition.local`) in the orchestrator, inside
 * the decision that calls them (ADR 0010). The call's `tool.requested` and its result are then
 * committed in one transaction with the decision that follows the result, so such a call costs no
 * bus round trip, no executor and no commit of its own.
 *
 * Crash semantics: nothing of a local call exists outside the open transaction. If the process dies
 * (or the transaction fails) before the commit, nothing of the call was recorded; the message that
 * caused it is redelivered, decided again, and the tool runs again — which a pure tool allows. After
 * the commit, the call and its result are in the log and are never run again.
 */
export class LocalTools implements LocalToolRunner<AnyTool> {
  constructor(
    private readonly tools: ToolRegistry,
    private readonly logger: ToolLogger,
  ) {}

  /** The local tool a committed-to-be outbox message calls, if it calls one. */
  toolOf(message: OutboxMessage): AnyTool | undefined {
    if (message.headers[HEADERS.messageType] !== 'tool.call') return undefined;
    const tool = this.tools.get((message.payload as ToolCallCommand).tool);
    return tool?.local === true && tool.kind === 'pure' && !tool.remote ? tool : undefined;
  }

  /**
   * Runs the call and returns its result message, the same one the executor would send (same message
   * id: a copy from the executor, after a fallback, is dropped by the inbox). `undefined` when the call
   * must go to the executor after all: a service of the harness did not answer.
   */
  async run(tool: AnyTool, message: OutboxMessage): Promise<ToolResultMessage | undefined> {
    const command = message.payload as ToolCallCommand;
    const started = performance.now();
    const outcome = await inSpan(
      SPAN.toolExecute(command.tool),
      { ...toolCallAttributes(command), [ATTR.ledgerDecision]: LOCAL_TOOL_DECISION },
      () => runTool(tool, command, { logger: this.logger }),
    ).catch((error: unknown) => {
      this.logger.warn('local tool call failed to run; it goes to the tool executor', {
        tool: command.tool,
        callId: command.callId,
        error: error instanceof Error ? error.message : String(error),
      });
      return undefined;
    });
    // `uncertain` is for at-most-once tools only; a pure tool never gets it, but the executor decides if it did.
    if (!outcome || outcome.status === 'uncertain') return undefined;
    toolDuration().record(performance.now() - started, { tool: command.tool, decision: LOCAL_TOOL_DECISION });
    failpoint('orchestrator.local-tool.after-run');
    const result = (o: ToolResultMessage['outcome']): ToolResultMessage => ({
      kind: 'tool.result',
      messageId: `${command.idempotencyKey}:result:${o.status}`,
      tenantId: command.tenantId,
      threadId: command.threadId,
      runId: command.runId,
      step: command.step,
      callId: command.callId,
      // Secret-looking values (and fields the tool marks sensitive) never reach the thread.
      outcome: redactSecrets(o, tool.sensitive ?? []),
    });
    // What the executor's result becomes on its way over the bus: JSON. The message is built here from a
    // checked command and runTool's outcome, so only a completed call's result can break the contract: it
    // goes through JSON once (as it would on the bus), and one JSON cannot hold is a failed call.
    const json = outcome.status === 'completed' ? asJson(outcome.result) : { ok: true as const, value: undefined };
    if (json.ok && (outcome.status !== 'completed' || json.value !== undefined))
      return result(outcome.status === 'completed' ? { status: 'completed', result: json.value as Json } : outcome);
    return result({
      status: 'failed',
      error: { code: 'invalid_output', message: `${tool.name} returned a result that is not JSON`, retryable: false },
    });
  }
}

/** `value` as it reads after a trip through JSON; not ok when JSON cannot hold it (a BigInt, a cycle). */
function asJson(value: unknown): { ok: true; value: unknown } | { ok: false } {
  try {
    const text = JSON.stringify(value);
    return { ok: true, value: text === undefined ? undefined : JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
