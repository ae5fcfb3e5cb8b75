import { envProviderLimits, keyOf } from './provider-limits.config';

const parse = (value: string) => envProviderLimits().safeParse(value);
const messageOf = (value: string) => {
  const result = parse(value);
  return result.success ? undefined : result.error.issues[0]?.message;
};
const limit = (fields: Record<string, unknown>) =>
  JSON.stringify([{ name: 'openai', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY', ...fields }]);

describe('MODEL_LIMITS', () => {
  it('reads a limit with its window in seconds (a minute unless it says otherwise)', () => {
    expect(parse(limit({ requests: 500, tokens: 200_000 }))).toEqual({
      success: true,
      data: [
        {
          name: 'openai',
          baseUrl: 'https://api.openai.com/v1',
          apiKeyEnv: 'OPENAI_API_KEY',
          requests: 500,
          tokens: 200_000,
          windowSeconds: 60,
        },
      ],
    });
    expect(parse(limit({ concurrent: 5, windowSeconds: 2.5 }))).toMatchObject({ data: [{ windowSeconds: 2.5 }] });
  });

  it.each([
    ['not JSON', '{', /not JSON/],
    ['a limit without a bound', limit({}), /at least one of requests, tokens, concurrent/],
    ['a bound that is not a positive integer', limit({ requests: 0 }), /^limit 0\.requests: /],
    ['a key given as the secret itself', limit({ apiKeyEnv: 'sk-live-123', requests: 1 }), /name of a variable/],
    ['a field it does not know', limit({ requests: 1, rpm: 5 }), /^limit 0: /],
  ])('refuses %s, naming the problem', (_what, value, message) => {
    expect(messageOf(value)).toMatch(message);
  });

  it('refuses two limits with one name, or two limits for one key', () => {
    const a = { name: 'a', baseUrl: 'https://x.test/v1', apiKeyEnv: 'K', requests: 1 };
    expect(messageOf(JSON.stringify([a, { ...a, baseUrl: 'https://y.test/v1' }]))).toBe('limit name a appears twice');
    expect(messageOf(JSON.stringify([a, { ...a, name: 'b', baseUrl: 'https://x.test/v1/' }]))).toBe(
      'two limits for one key (https://x.test/v1/ with K)',
    );
  });

  it('counts a key by its API root without a trailing slash and the name of its variable', () => {
    expect(keyOf('https://x.test/v1/', 'K')).toBe(keyOf('https://x.test/v1', 'K'));
    expect(keyOf('https://x.test/v1', 'K')).not.toBe(keyOf('https://x.test/v1', 'OTHER'));
  });
});
