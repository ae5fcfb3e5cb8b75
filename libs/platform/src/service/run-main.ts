import { ConfigError, EX_CONFIG } from '../config';

/**
 * The entry point of every service: a configuration error exits 78 with the message that names the
 * variables; any other start-up failure (database or bus unreachable…) exits 1 with its message on one
 * line — the stack only when RATCHET_DEBUG=1, since the fix is usually in the environment.
 */
export function runMain(service: string, main: () => Promise<unknown>): void {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(EX_CONFIG);
    }
    const detail =
      process.env['RATCHET_DEBUG'] === '1' && error instanceof Error
        ? error.stack
        : ((error as Error)?.message ?? String(error));
    process.stderr.write(`${service}: failed to start: ${detail}\n`);
    process.exit(1);
  });
}
