import type { z } from 'zod';
import { ConfigError, type ConfigIssue } from './config-error';

export type Env = Readonly<Record<string, string | undefined>>;
export type ConfigResult<T> =
  { readonly ok: true; readonly config: T } | { readonly ok: false; readonly error: ConfigError };

/** Variables whose values never appear in an error message. */
const SECRET_NAME = /(KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?)$/i;
const MAX_SHOWN = 120;

/**
 * Parses `env` with `schema` and returns the typed, frozen config, or a ConfigError naming every bad
 * variable. Empty values count as unset, so `FOO=` falls back to FOO's default.
 */
export function parseConfig<S extends z.ZodType>(
  schema: S,
  env: Env = process.env,
  service = 'ratchet',
): ConfigResult<Readonly<z.output<S>>> {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.trim() !== '') values[name] = value;
  }
  const parsed = schema.safeParse(values);
  if (parsed.success) return { ok: true, config: Object.freeze(parsed.data) };
  return { ok: false, error: new ConfigError(service, toIssues(parsed.error.issues, values)) };
}

/**
 * Parses the environment once, at boot. Throws ConfigError listing every bad variable by name;
 * wrap the call in `exitOnConfigError` in a service's main.ts.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: Env = process.env,
  service = 'ratchet',
): Readonly<z.output<S>> {
  const result = parseConfig(schema, env, service);
  if (!result.ok) throw result.error;
  return result.config;
}

function toIssues(zodIssues: readonly z.core.$ZodIssue[], values: Record<string, string>): ConfigIssue[] {
  const byVariable = new Map<string, { messages: string[]; received?: string }>();
  for (const issue of zodIssues) {
    const key = issue.path[0];
    const variable = typeof key === 'string' ? key : '(config)';
    const raw = typeof key === 'string' ? values[key] : undefined;
    const entry = byVariable.get(variable) ?? {
      messages: [],
      received: raw === undefined ? undefined : show(variable, raw),
    };
    const message = raw === undefined && typeof key === 'string' ? 'required' : issue.message;
    if (!entry.messages.includes(message)) entry.messages.push(message);
    byVariable.set(variable, entry);
  }
  return [...byVariable].map(([variable, { messages, received }]) => ({
    variable,
    expected: messages.join('; '),
    received,
  }));
}

/** The received value as shown in the message: quoted, shortened, and without secrets. */
function show(variable: string, raw: string): string {
  if (SECRET_NAME.test(variable)) return '(value hidden)';
  let value = raw;
  if (URL.canParse(raw)) {
    const url = new URL(raw);
    if (url.password) {
      url.password = '***';
      value = url.toString();
    }
  }
  if (value.length > MAX_SHOWN) value = `${value.slice(0, MAX_SHOWN)}…`;
  return JSON.stringify(value);
}
