import { ConfigError, EX_CONFIG } from './config-error';

export interface ExitIo {
  readonly stderr: { write(text: string): unknown };
  readonly exit: (code: number) => never;
}

const processIo: ExitIo = {
  stderr: process.stderr,
  exit: (code) => process.exit(code),
};

/**
 * Runs a service's boot function; a ConfigError (thrown or rejected) is printed to stderr and ends
 * the process with 78 (EX_CONFIG), without a stack trace, since the fix is in the environment, not the
 * code. Any other error passes through unchanged.
 *
 * @example
 * void exitOnConfigError(async () => {
 *   const config = loadConfig(workerConfigSchema, process.env, 'orchestrator');
 *   ...
 * });
 */
export function exitOnConfigError<T>(fn: () => Promise<T>, io?: ExitIo): Promise<T>;
export function exitOnConfigError<T>(fn: () => T, io?: ExitIo): T;
export function exitOnConfigError<T>(fn: () => T | Promise<T>, io: ExitIo = processIo): T | Promise<T> {
  const handle = (error: unknown): never => {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr.write(`${error.message}\n`);
    return io.exit(EX_CONFIG);
  };
  let result: T | Promise<T>;
  try {
    result = fn();
  } catch (error) {
    return handle(error);
  }
  return result instanceof Promise ? result.catch(handle) : result;
}
