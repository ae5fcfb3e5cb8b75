import { EX_CONFIG } from '@ratchet/platform';

/** The exit codes of `ratchet`, as documented in `ratchet --help`. */
export const EXIT = {
  ok: 0,
  /** The command ran and failed (a run failed, a server refused, a thread does not exist…). */
  failure: 1,
  /** The command line was wrong: unknown command or option, bad or missing argument. */
  usage: 2,
  /** The environment (or a global option standing in for it) is invalid: EX_CONFIG from sysexits.h. */
  config: EX_CONFIG,
} as const;

/** An error meant for the operator: printed as one line (no stack) and mapped to an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
    readonly code = 'cli.failed',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

/** A command-line mistake the parser cannot see (e.g. a value out of range): exit 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage, 'cli.usage');
    this.name = 'UsageError';
  }
}

/** Postgres error codes the CLI explains instead of passing through. */
export const PG = {
  undefinedTable: '42P01',
  invalidCatalogName: '3D000',
  duplicateDatabase: '42P04',
} as const;

export function pgCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * Rethrows a failure of a statement: a table that is not there means the schema was never migrated,
 * said as such (`message` names what to run); any other error as it is.
 */
export function rethrowNotMigrated(error: unknown, message: string): never {
  if (pgCode(error) === PG.undefinedTable)
    throw new CliError(message, undefined, 'database.not_migrated', { cause: error });
  throw error;
}
