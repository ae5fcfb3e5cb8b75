import { Waitpoint, type AgentToolConfig, type Json, type ToolCallCommand } from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';
import { abandonedAttempts, type AbandonedAttempts } from './abandoned-attempts';
import { callKind, ToolError, type AnyTool, type ToolContext, type ToolLogger, type ToolMemory } from './tool';

export type ToolRunOutcome =
  | { status: 'completed'; result: Json }
  /** The call opened a waitpoint: the run waits for the outside world (a tool that `opensWaitpoint`). */
  | { status: 'waiting'; waitpoint: Waitpoint }
  | { status: 'failed'; error: { code: string; message: string; retryable: boolean } }
  /** An at-most-once tool failed in a way that may have left the effect done: a human decides. */
  | { status: 'uncertain'; reason: string };

/** What the executor gives every call besides the command: its logger and the tenant-bound services. */
export interface ToolServices {
  logger: ToolLogger;
  /** Memory bound to the call's tenant and principal. */
  memoryFor?: (tenantId: string, principal: ToolCallCommand['principal']) => ToolMemory;
  /**
   * How long an aborted attempt (timeout, run stopped) may take to settle before it is abandoned (default
   * 5 s). The next attempt of the call starts only once the previous one settled.
   */
  abortGraceMs?: number;
  /** This process's abandoned attempts (default: the process-wide registry). */
  abandoned?: AbandonedAttempts;
  /** Told of each abandoned attempt (a metric). */
  onAbandoned?: (tool: string) => void;
  /** The clock tools read (the executor's injected one; the system clock when absent). */
  now?: () => Date;
}

/** How long an aborted attempt may take to settle before it is abandoned, unless the services say otherwise. */
export const DEFAULT_ABORT_GRACE_MS = 5000;

export function toolContext(
  command: ToolCallCommand,
  services: ToolServices,
  signal: AbortSignal,
  attempt: number,
): ToolContext {
  const config: AgentToolConfig = command.toolConfig ?? {};
  return {
    idempotencyKey: command.idempotencyKey,
    tenantId: command.tenantId,
    threadId: command.threadId,
    runId: command.runId,
    step: command.step,
    callId: command.callId,
    principal: command.principal,
    now: services.now ?? (() => new Date()),
    signal,
    logger: services.logger,
    config,
    attempt,
    memory: services.memoryFor?.(command.tenantId, command.principal),
  };
}

/**
 * Runs a tool with its timeout and retry policy. Invalid arguments never reach the tool; every failure
 * comes back as an outcome the model can read, never as a crash. Transient errors (`ToolError` with
 * `retryable`) are retried with exponential backoff up to `retry.attempts` — for an `at-most-once` tool
 * only when the error says the effect did not happen. A timeout or a `mayHaveActed` error of an
 * `at-most-once` tool is `uncertain`, never a failure the model would act on nor a blind retry. A
 * `TransientError` (a harness service such as memory did not answer) of a pure or idempotent tool is
 * thrown on, so the message is redelivered later instead of the model being told of a failure.
 */
export async function runTool(
  tool: AnyTool,
  command: ToolCallCommand,
  services: ToolServices | ToolLogger,
  /** Aborts the call when its run stops (cancelled, interrupted, out of time): the tool sees its signal fire. */
  stop?: AbortSignal,
): Promise<ToolRunOutcome> {
  const svc: ToolServices = 'logger' in services ? services : { logger: services };
  const parsed = tool.input.safeParse(command.args);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    return {
      status: 'failed',
      error: { code: 'invalid_arguments', message: `invalid arguments for ${tool.name}: ${issues}`, retryable: false },
    };
  }
  const once = callKind(tool, command.args, command.toolConfig) === 'at-most-once';
  const attempts = Math.max(1, tool.retry.attempts);
  const abandoned = svc.abandoned ?? abandonedAttempts;
  const graceMs = svc.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS;
  // An earlier attempt of this call that was given up on may still run here: never two at once.
  abandoned.assertNoneRunning(command.idempotencyKey, graceMs);
  for (let attempt = 1; ; attempt++) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error('timeout')), tool.timeoutMs);
    const onStop = () => controller.abort(stop?.reason);
    if (stop?.aborted) onStop();
    else stop?.addEventListener('abort', onStop, { once: true });
    const ctx = toolContext(command, svc, controller.signal, attempt);
    const execution = Promise.resolve().then(() => tool.execute(parsed.data, ctx));
    try {
      const result = await Promise.race([execution, aborted(controller.signal)]);
      if (tool.output) {
        const out = tool.output.safeParse(result);
        if (!out.success)
          return {
            status: 'failed',
            error: { code: 'invalid_output', message: `${tool.name} returned an invalid result`, retryable: false },
          };
      }
      if (tool.opensWaitpoint) {
        const waitpoint = Waitpoint.safeParse(result);
        if (!waitpoint.success)
          return {
            status: 'failed',
            error: { code: 'invalid_output', message: `${tool.name} returned no valid waitpoint`, retryable: false },
          };
        return { status: 'waiting', waitpoint: waitpoint.data };
      }
      return { status: 'completed', result };
    } catch (error) {
      // A service of the harness itself (memory) did not answer: not the tool's failure, and nothing the
      // model should act on. A pure or idempotent call goes back to the bus and runs again later (the
      // ledger says `started`, or nothing for a pure call, so the redelivery runs it again); an
      // at-most-once call falls through below.
      if (error instanceof TransientError && !once && !controller.signal.aborted) throw error;
      const stopped = stop?.aborted === true;
      const timedOut = controller.signal.aborted && !stopped;
      // An aborted attempt is over only when it settles (a tool may ignore its signal): until then no next
      // attempt starts. One that does not settle within the grace period is abandoned for good here.
      const abandonedNow = controller.signal.aborted && !(await settlesWithin(execution, graceMs));
      if (abandonedNow) {
        abandoned.add(
          command.idempotencyKey,
          tool.name,
          execution.catch(() => undefined),
        );
        svc.onAbandoned?.(tool.name);
        svc.logger.warn('tool attempt abandoned: it did not settle after its abort', {
          tool: tool.name,
          key: command.idempotencyKey,
          attempt,
          graceMs,
          why: stopped ? 'run stopped' : 'timeout',
        });
        // A pure or idempotent call whose run goes on gets a clean attempt later, from the bus (not while
        // this one runs); an at-most-once call is uncertain, and a stopped run's call is closed, below.
        if (!once && !stopped)
          throw new TransientError(
            `${tool.name} did not settle within ${graceMs} ms after its ${tool.timeoutMs} ms timeout: abandoned, the call is tried again later`,
            'tool.abandoned',
            { retryAfterMs: graceMs },
          );
      }
      const toolError = error instanceof ToolError ? error : undefined;
      const mayHaveActed = timedOut || stopped || (toolError?.mayHaveActed ?? !toolError);
      if (once && mayHaveActed) {
        const what = stopped
          ? 'was aborted mid-call because its run stopped'
          : timedOut
            ? `did not finish within ${tool.timeoutMs} ms`
            : `failed: ${(error as Error).message}`;
        return {
          status: 'uncertain',
          reason: `${tool.name} (at-most-once) ${what}; the effect may have happened, a human must decide`,
        };
      }
      if (stopped)
        return {
          status: 'failed',
          error: {
            code: 'run.stopped',
            message: `${tool.name} was aborted mid-call: its run stopped`,
            retryable: false,
          },
        };
      const retryable = !timedOut && (toolError?.retryable ?? false);
      if (retryable && attempt < attempts) {
        svc.logger.warn('tool failed, retrying', { tool: tool.name, attempt, code: toolError?.code });
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
      const code = toolError ? toolError.code : 'tool_error';
      const message = (error as Error).message ?? String(error);
      return {
        status: 'failed',
        error: {
          code,
          message: retryable ? `${message} (gave up after ${attempt} attempts)` : message,
          retryable: false,
        },
      };
    } finally {
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
    }
  }
}

/** Whether `execution` settles (either way) within `ms`. */
async function settlesWithin(execution: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    execution.then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return settled;
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
  );
}
