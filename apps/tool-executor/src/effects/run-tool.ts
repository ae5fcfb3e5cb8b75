import type { Json, ToolCallCommand } from '@ratchet/contracts';
import { ToolError, type AnyTool, type ToolContext, type ToolLogger } from '@ratchet/tools';

export type ToolRunOutcome =
  | { status: 'completed'; result: Json }
  | { status: 'failed'; error: { code: string; message: string; retryable: boolean } };

/**
 * Runs a tool with its timeout and retry policy. Invalid arguments never reach the tool; every failure
 * comes back as an outcome the model can read, never as a crash.
 */
export async function runTool(tool: AnyTool, command: ToolCallCommand, logger: ToolLogger): Promise<ToolRunOutcome> {
  const parsed = tool.input.safeParse(command.args);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    return {
      status: 'failed',
      error: { code: 'invalid_arguments', message: `invalid arguments for ${tool.name}: ${issues}`, retryable: false },
    };
  }
  const attempts = Math.max(1, tool.retry.attempts);
  for (let attempt = 1; ; attempt++) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error('timeout')), tool.timeoutMs);
    const ctx: ToolContext = {
      idempotencyKey: command.idempotencyKey,
      tenantId: command.tenantId,
      threadId: command.threadId,
      runId: command.runId,
      callId: command.callId,
      principal: command.principal,
      signal: controller.signal,
      logger,
    };
    try {
      const result = await Promise.race([tool.execute(parsed.data, ctx), aborted(controller.signal)]);
      if (tool.output) {
        const out = tool.output.safeParse(result);
        if (!out.success)
          return {
            status: 'failed',
            error: { code: 'invalid_output', message: `${tool.name} returned an invalid result`, retryable: false },
          };
      }
      return { status: 'completed', result };
    } catch (error) {
      const timedOut = controller.signal.aborted;
      const retryable = !timedOut && (error instanceof ToolError ? error.retryable : false);
      if (retryable && attempt < attempts) {
        await new Promise((r) => setTimeout(r, tool.retry.backoffMs * 2 ** (attempt - 1)));
        continue;
      }
      if (timedOut)
        return {
          status: 'failed',
          error: {
            code: 'timeout',
            message: `${tool.name} did not finish within ${tool.timeoutMs} ms`,
            retryable: false,
          },
        };
      const code = error instanceof ToolError ? error.code : 'tool_error';
      return {
        status: 'failed',
        error: { code, message: (error as Error).message ?? String(error), retryable: false },
      };
    } finally {
      clearTimeout(timer);
    }
  }
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
  );
}
