import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, configFields, envString, extendConfig, loadConfig, type Env } from '@ratchet/platform';

/**
 * The CLI reads the same environment as the services (DATABASE_URL, NATS_URL, RATCHET_SUBJECT_PREFIX,
 * RATCHET_STREAM_PREFIX …) through the same schema, plus what only an operator's terminal needs.
 */
export const cliConfigSchema = extendConfig({
  /**
   * The master key file, to read threads' content where it is sealed at rest (and `ratchet master-key`);
   * default: .ratchet/master.json when it exists (what `npm start` makes).
   */
  RATCHET_KEY_FILE: configFields.RATCHET_KEY_FILE,
  /** The gateway's port, to default `ratchet demo --gateway` to the local gateway. */
  GATEWAY_PORT: configFields.GATEWAY_PORT,
  /** The API key `ratchet demo` sends; defaults to the local development bootstrap key. */
  RATCHET_API_KEY: envString().optional(),
});
export type CliConfig = ReturnType<typeof loadCliConfig>;

/** Global options: `--json` and one override per shared environment variable. */
export interface GlobalOptions {
  json?: boolean;
  databaseUrl?: string;
  natsUrl?: string;
  subjectPrefix?: string;
  streamPrefix?: string;
}

/** Each global override and the variable it stands in for (its value is validated as that variable). */
export const GLOBAL_ENV_OPTIONS = [
  { flags: '--database-url <url>', key: 'databaseUrl', variable: 'DATABASE_URL', help: 'Postgres URL' },
  { flags: '--nats-url <url>', key: 'natsUrl', variable: 'NATS_URL', help: 'NATS URL(s), comma-separated' },
  {
    flags: '--subject-prefix <prefix>',
    key: 'subjectPrefix',
    variable: 'RATCHET_SUBJECT_PREFIX',
    help: 'NATS subject prefix',
  },
  {
    flags: '--stream-prefix <prefix>',
    key: 'streamPrefix',
    variable: 'RATCHET_STREAM_PREFIX',
    help: 'JetStream stream-name prefix',
  },
] as const satisfies readonly { flags: string; key: keyof GlobalOptions; variable: string; help: string }[];

/**
 * Parses the environment with the global overrides applied. Throws ConfigError (exit 78) naming every
 * bad variable. Loaded per command, so `--help` works whatever the environment holds.
 */
export function loadCliConfig(globals: GlobalOptions, env: Env = process.env) {
  const merged: Record<string, string | undefined> = { ...env };
  for (const o of GLOBAL_ENV_OPTIONS) {
    const value = globals[o.key];
    if (value !== undefined) merged[o.variable] = value;
  }
  // The local master key `npm start` makes: the CLI beside a local system reads content as it does.
  if (merged['RATCHET_KEY_FILE'] === undefined && existsSync(LOCAL_KEY_FILE))
    merged['RATCHET_KEY_FILE'] = LOCAL_KEY_FILE;
  try {
    return loadConfig(cliConfigSchema, merged, 'ratchet');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // A bad value given as an option is reported under its variable and the option it came from.
    const fromOption = (variable: string) =>
      GLOBAL_ENV_OPTIONS.find((o) => o.variable === variable && globals[o.key] !== undefined);
    throw new ConfigError(
      error.service,
      error.issues.map((issue) => {
        const option = fromOption(issue.variable);
        return option ? { ...issue, variable: `${issue.variable} (${option.flags.split(' ')[0]})` } : issue;
      }),
    );
  }
}

/** Where `npm start` keeps the local master key file (when RATCHET_KEY_FILE is not set). */
export const LOCAL_KEY_FILE = resolve('.ratchet', 'master.json');

/** The API key the local development bootstrap seeds (`GATEWAY_BOOTSTRAP_API_KEY` in `npm start`). */
export const LOCAL_DEMO_API_KEY = 'rk_local_demo_key';
export const DEFAULT_TENANT = 'demo';
