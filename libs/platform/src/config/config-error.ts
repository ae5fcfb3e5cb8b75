/** `EX_CONFIG` from sysexits.h: the service was started with a configuration it cannot run with. */
export const EX_CONFIG = 78;

/** One environment variable that failed validation, named so an operator can fix it. */
export interface ConfigIssue {
  /** The environment variable, e.g. `DATABASE_URL` (or `(config)` for a rule spanning several). */
  readonly variable: string;
  /** What was expected, e.g. `expected a postgres:// URL`, or `required`. */
  readonly expected: string;
  /** The value received, already redacted where it may hold a secret; undefined when unset. */
  readonly received?: string;
}

/**
 * The environment does not satisfy a service's config schema. The message lists every bad variable
 * at once, so one restart is enough to see everything that needs fixing. Never retryable.
 */
export class ConfigError extends Error {
  readonly code = 'config.invalid';
  readonly retry = 'never';
  readonly exitCode = EX_CONFIG;

  constructor(
    readonly service: string,
    readonly issues: readonly ConfigIssue[],
  ) {
    super(formatConfigIssues(service, issues));
    this.name = 'ConfigError';
  }
}

export function formatConfigIssues(service: string, issues: readonly ConfigIssue[]): string {
  const lines = issues.map(
    (i) => `  - ${i.variable}: ${i.expected}${i.received === undefined ? '' : `, got ${i.received}`}`,
  );
  return `${service}: invalid configuration:\n${lines.join('\n')}`;
}
