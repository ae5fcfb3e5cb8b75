import { parseCallbackKeys, signCallback, verifyCallback, type CallbackKey } from './callback-token';

const keysOf = (spec: string): CallbackKey[] => {
  const parsed = parseCallbackKeys(spec);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.keys;
};
const NEW = `k2:${'n'.repeat(40)}`;
const OLD = `k1:${'o'.repeat(40)}`;
const EXP = '2027-01-01T12:00:00.000Z';

describe('waitpoint callback tokens', () => {
  it('given a token signed for a waitpoint, then it verifies for that tenant and waitpoint only', () => {
    const keys = keysOf(NEW);
    const token = signCallback(keys, 'acme', 'wp_1', EXP);
    expect(token).toMatch(/^k2\.1798804800\.[A-Za-z0-9_-]{43}$/);
    expect(verifyCallback(keys, 'acme', 'wp_1', token)).toBe(true);
    expect(verifyCallback(keys, 'globex', 'wp_1', token)).toBe(false);
    expect(verifyCallback(keys, 'acme', 'wp_2', token)).toBe(false);
  });

  it('given a tampered expiry, signature or key id, or garbage, then it does not verify', () => {
    const keys = keysOf(NEW);
    const [id, exp, sig] = signCallback(keys, 'acme', 'wp_1', EXP).split('.') as [string, string, string];
    expect(verifyCallback(keys, 'acme', 'wp_1', `${id}.${Number(exp) + 3600}.${sig}`)).toBe(false);
    const flipped = `${sig.slice(0, 10)}${sig[10] === 'A' ? 'B' : 'A'}${sig.slice(11)}`;
    expect(verifyCallback(keys, 'acme', 'wp_1', `${id}.${exp}.${flipped}`)).toBe(false);
    // The same bytes spelled another way (the last character's unused bits) are not the token.
    const last = sig.at(-1)!;
    const respelled = `${sig.slice(0, -1)}${String.fromCharCode(last.charCodeAt(0) ^ 1)}`;
    expect(verifyCallback(keys, 'acme', 'wp_1', `${id}.${exp}.${respelled}`)).toBe(false);
    expect(verifyCallback(keys, 'acme', 'wp_1', `k9.${exp}.${sig}`)).toBe(false);
    for (const bad of ['', 'x', 'a.b.c', `${id}.${exp}`, `${id}.${exp}.${sig}.x`])
      expect(verifyCallback(keys, 'acme', 'wp_1', bad)).toBe(false);
  });

  it('given a rotation, then the new key signs and tokens of the old key still verify until it is dropped', () => {
    const before = keysOf(OLD);
    const during = keysOf(`${NEW},${OLD}`);
    const old = signCallback(before, 'acme', 'wp_1', EXP);
    expect(signCallback(during, 'acme', 'wp_1', EXP)).toMatch(/^k2\./);
    expect(verifyCallback(during, 'acme', 'wp_1', old)).toBe(true);
    expect(verifyCallback(keysOf(NEW), 'acme', 'wp_1', old)).toBe(false);
  });

  it('refuses a key list that is empty, malformed, repeated or with a short secret, naming the entry and never the secret', () => {
    expect(parseCallbackKeys('')).toEqual({ ok: false, problem: 'no key: expected <id>:<secret>[,<id>:<secret>…]' });
    expect(parseCallbackKeys('nocolon')).toMatchObject({ ok: false, problem: expect.stringContaining('entry 1') });
    expect(parseCallbackKeys('k1:short')).toEqual({
      ok: false,
      problem: 'key k1: the secret must be at least 32 characters',
    });
    expect(parseCallbackKeys(`${OLD},${OLD}`)).toEqual({ ok: false, problem: 'key k1 is listed twice' });
  });
});
