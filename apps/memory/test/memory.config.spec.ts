import { ConfigError, loadConfig } from '@ratchet/platform';
import { memoryConfigSchema } from '../src/memory.config';

function load(env: Record<string, string>) {
  return loadConfig(memoryConfigSchema, env, 'memory');
}

describe('memory configuration', () => {
  it('defaults: 64 KiB values, 16 KiB texts, 256-byte keys, sessions kept 7 days, health on 9094', () => {
    expect(load({})).toMatchObject({
      HEALTH_PORT: 9094,
      MEMORY_MAX_VALUE_BYTES: 65_536,
      MEMORY_MAX_TEXT_BYTES: 16_384,
      MEMORY_MAX_KEY_BYTES: 256,
      MEMORY_RETENTION: { 'sessions/': 604_800 },
    });
  });

  it('reads retention rules with units, or none', () => {
    expect(load({ MEMORY_RETENTION: 'sessions/=12h, scratch=30m,audit/x/=90d,t=45s' }).MEMORY_RETENTION).toEqual({
      'sessions/': 43_200,
      scratch: 1800,
      'audit/x/': 7_776_000,
      t: 45,
    });
    expect(load({ MEMORY_RETENTION: 'none' }).MEMORY_RETENTION).toEqual({});
  });

  it.each(['sessions', 'sessions/=7w', 'a//b/=1d', '=1d', 'x=0d'])('refuses MEMORY_RETENTION=%s by name', (value) => {
    expect(() => load({ MEMORY_RETENTION: value })).toThrow(ConfigError);
    expect(() => load({ MEMORY_RETENTION: value })).toThrow(/MEMORY_RETENTION: expected "none" or/);
  });
});
