import { z } from 'zod';
import {
  ConfigError,
  DEFAULT_DATABASE_URL,
  DEFAULT_NATS_URL,
  EX_CONFIG,
  baseConfigSchema,
  envInt,
  envMillis,
  exitOnConfigError,
  extendConfig,
  gatewayConfigSchema,
  loadConfig,
  parseConfig,
  workerConfigSchema,
} from './index';

function errorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies every default to an empty environment', () => {
    const config = loadConfig(baseConfigSchema, {}, 'orchestrator');
    expect(config).toMatchObject({
      DATABASE_URL: DEFAULT_DATABASE_URL,
      NATS_URL: DEFAULT_NATS_URL,
      RATCHET_SUBJECT_PREFIX: 'ratchet',
      RATCHET_STREAM_PREFIX: 'RATCHET',
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_MS: 10_000,
    });
    expect(config.SERVICE_INSTANCE_ID).toMatch(new RegExp(`-${process.pid}$`));
    expect(config.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
  });

  it('parses given values into their types and drops unrelated variables', () => {
    const config = loadConfig(
      workerConfigSchema,
      {
        DATABASE_URL: 'postgresql://u:p@db:5432/x',
        RATCHET_SUBJECT_PREFIX: 't_42',
        LOG_LEVEL: 'DEBUG',
        SHUTDOWN_GRACE_MS: '2500',
        HEALTH_PORT: '9191',
        HOME: '/root',
      },
      'memory',
    );
    expect(config).toMatchObject({
      DATABASE_URL: 'postgresql://u:p@db:5432/x',
      RATCHET_STREAM_PREFIX: 'T_42',
      LOG_LEVEL: 'debug',
      SHUTDOWN_GRACE_MS: 2500,
      HEALTH_PORT: 9191,
    });
    expect(config).not.toHaveProperty('HOME');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('keeps an explicit stream prefix instead of deriving it', () => {
    expect(loadConfig(baseConfigSchema, { RATCHET_STREAM_PREFIX: 'CI_1' }).RATCHET_STREAM_PREFIX).toBe('CI_1');
  });

  it('accepts a list of NATS seed servers', () => {
    const urls = 'nats://a:4222, nats://b:4222';
    expect(loadConfig(baseConfigSchema, { NATS_URL: urls }).NATS_URL).toBe(urls);
    expect(parseConfig(baseConfigSchema, { NATS_URL: 'nats://a:4222,http://b' }).ok).toBe(false);
  });

  it('treats an empty value as unset', () => {
    expect(loadConfig(baseConfigSchema, { NATS_URL: '  ' }).NATS_URL).toBe(DEFAULT_NATS_URL);
  });

  it('names a missing required variable', () => {
    const schema = extendConfig({ MODEL_API_KEY: z.string() });
    const error = errorOf(() => loadConfig(schema, {}, 'orchestrator'));
    expect(error.message).toBe('orchestrator: invalid configuration:\n  - MODEL_API_KEY: required');
    expect(error.issues).toEqual([{ variable: 'MODEL_API_KEY', expected: 'required', received: undefined }]);
  });

  it('names a malformed URL with what was expected and what it got', () => {
    const error = errorOf(() => loadConfig(baseConfigSchema, { DATABASE_URL: 'mysql://x' }, 'orchestrator'));
    expect(error.message).toBe(
      'orchestrator: invalid configuration:\n  - DATABASE_URL: expected a postgres:// URL, got "mysql://x"',
    );
  });

  it('names a bad number', () => {
    const error = errorOf(() => loadConfig(baseConfigSchema, { SHUTDOWN_GRACE_MS: '5s' }, 'memory'));
    expect(error.message).toContain(
      'SHUTDOWN_GRACE_MS: expected a duration in milliseconds (an integer >= 0), got "5s"',
    );
    const range = errorOf(() => loadConfig(gatewayConfigSchema, { GATEWAY_PORT: '70000' }, 'gateway'));
    expect(range.message).toContain('GATEWAY_PORT: expected a TCP port (1-65535), got "70000"');
  });

  it("parses the deployment's redaction patterns, and names one that does not compile", () => {
    const config = loadConfig(
      baseConfigSchema,
      { RATCHET_REDACT_PATTERNS: '["ACME-[0-9]{6}", "emp#\\\\d+"]' },
      'memory',
    );
    expect(config.RATCHET_REDACT_PATTERNS.map((p) => p.source)).toEqual(['ACME-[0-9]{6}', 'emp#\\d+']);
    expect(loadConfig(baseConfigSchema, {}, 'memory').RATCHET_REDACT_PATTERNS).toEqual([]);
    const bad = errorOf(() => loadConfig(baseConfigSchema, { RATCHET_REDACT_PATTERNS: '["(unclosed"]' }, 'memory'));
    expect(bad.message).toContain('RATCHET_REDACT_PATTERNS: "(unclosed" is not a regular expression');
    const notJson = errorOf(() => loadConfig(baseConfigSchema, { RATCHET_REDACT_PATTERNS: 'ACME-.*' }, 'memory'));
    expect(notJson.message).toContain('RATCHET_REDACT_PATTERNS: expected a JSON array of regular expressions');
  });

  it('names every bad variable at once', () => {
    const schema = extendConfig({ MODEL_API_KEY: z.string(), BATCH: envInt({ min: 1, max: 10 }) });
    const error = errorOf(() =>
      loadConfig(
        schema,
        {
          DATABASE_URL: 'mysql://x',
          NATS_URL: 'localhost:4222',
          LOG_LEVEL: 'loud',
          BATCH: '0',
          RATCHET_SUBJECT_PREFIX: 'a.b',
        },
        'orchestrator',
      ),
    );
    expect(error.issues.map((i) => i.variable).sort()).toEqual(
      ['BATCH', 'DATABASE_URL', 'LOG_LEVEL', 'MODEL_API_KEY', 'NATS_URL', 'RATCHET_SUBJECT_PREFIX'].sort(),
    );
    expect(error.message).toContain(
      '  - NATS_URL: expected a nats:// URL or a comma-separated list of them, got "localhost:4222"',
    );
    expect(error.message).toContain(
      '  - LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    );
    expect(error.message).toContain('  - BATCH: expected an integer from 1 to 10, got "0"');
    expect(error.message).toContain('  - MODEL_API_KEY: required');
    expect(error.message.split('\n')).toHaveLength(7);
  });

  it('never prints a secret', () => {
    const error = errorOf(() =>
      loadConfig(
        gatewayConfigSchema,
        { GATEWAY_BOOTSTRAP_API_KEY: 'short', DATABASE_URL: 'mysql://admin:hunter2@db/x' },
        'gateway',
      ),
    );
    expect(error.message).not.toContain('short');
    expect(error.message).not.toContain('hunter2');
    expect(error.message).toContain('GATEWAY_BOOTSTRAP_API_KEY: expected at least 16 characters, got (value hidden)');
  });

  it('gives the gateway its defaults', () => {
    const config = loadConfig(gatewayConfigSchema, {}, 'gateway');
    expect(config).toMatchObject({ GATEWAY_PORT: 8080, GATEWAY_HOST: '0.0.0.0', GATEWAY_BOOTSTRAP_TENANT: 'demo' });
    expect(config.GATEWAY_BOOTSTRAP_API_KEY).toBeUndefined();
  });

  it('lets a service override a base variable', () => {
    const schema = extendConfig({ SHUTDOWN_GRACE_MS: envMillis().default(30_000) });
    expect(loadConfig(schema, {}).SHUTDOWN_GRACE_MS).toBe(30_000);
  });

  it('returns the error instead of throwing through parseConfig', () => {
    const result = parseConfig(baseConfigSchema, { NATS_URL: 'x' }, 'approvals');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.issues[0]?.variable).toBe('NATS_URL');
  });
});

describe('exitOnConfigError', () => {
  class Exit extends Error {
    constructor(readonly code: number) {
      super(`exit ${code}`);
    }
  }
  const io = () => {
    const written: string[] = [];
    return {
      written,
      stderr: { write: (text: string) => written.push(text) },
      exit: (code: number): never => {
        throw new Exit(code);
      },
    };
  };

  it('prints the message and exits with EX_CONFIG', () => {
    const fake = io();
    expect(() => exitOnConfigError(() => loadConfig(baseConfigSchema, { NATS_URL: 'x' }, 'memory'), fake)).toThrow(
      new Exit(EX_CONFIG),
    );
    expect(fake.written.join('')).toBe(
      'memory: invalid configuration:\n  - NATS_URL: expected a nats:// URL or a comma-separated list of them, got "x"\n',
    );
  });

  it('handles an async boot function', async () => {
    const fake = io();
    await expect(
      exitOnConfigError(async () => loadConfig(baseConfigSchema, { LOG_LEVEL: 'x' }, 'gateway'), fake),
    ).rejects.toEqual(new Exit(78));
    expect(fake.written.join('')).toContain('LOG_LEVEL');
  });

  it('passes results and other errors through', async () => {
    const fake = io();
    expect(exitOnConfigError(() => 42, fake)).toBe(42);
    await expect(exitOnConfigError(() => Promise.reject(new Error('boom')), fake)).rejects.toThrow('boom');
    expect(fake.written).toEqual([]);
  });
});
