import { loadConfig } from '@ratchet/platform';
import { claimAfter, DEFAULT_CLAIM_AFTER_MS, toolExecutorConfigSchema } from './tool-executor.config';

const base = { DATABASE_URL: 'postgres://x@localhost/x', NATS_URL: 'nats://127.0.0.1:4222' };

describe('TOOL_CLAIM_AFTER_MS (deferred claims of idempotent calls)', () => {
  const setting = (value?: string) =>
    loadConfig(
      toolExecutorConfigSchema,
      { ...base, ...(value === undefined ? {} : { TOOL_CLAIM_AFTER_MS: value }) },
      'tool-executor',
    ).TOOL_CLAIM_AFTER_MS;

  it('given nothing set, then claims are deferred by 1 s, or a third of the ack wait when that is shorter', () => {
    expect(claimAfter(setting(), 15_000)).toBe(DEFAULT_CLAIM_AFTER_MS);
    expect(claimAfter(setting(), 2_000)).toBe(666);
  });

  it('given a duration, then it is used; given off, then `started` is committed before an idempotent call acts', () => {
    expect(claimAfter(setting('250'), 15_000)).toBe(250);
    expect(claimAfter(setting('0'), 15_000)).toBe(0);
    expect(claimAfter(setting('OFF'), 15_000)).toBeUndefined();
  });

  it('given a duration past a third of the ack wait, then the service refuses to start and names the bound', () => {
    expect(() => claimAfter(setting('6000'), 15_000)).toThrow(
      /TOOL_CLAIM_AFTER_MS.*at most a third of RATCHET_ACK_WAIT_MS \(5000 ms\), or off; got 6000/,
    );
  });

  it('given something that is neither a duration nor off, then the configuration error says what is expected', () => {
    expect(() => setting('soon')).toThrow(
      /TOOL_CLAIM_AFTER_MS.*expected a duration in milliseconds \(an integer >= 0\) or off/,
    );
    expect(() => setting('-5')).toThrow(/TOOL_CLAIM_AFTER_MS/);
  });
});
