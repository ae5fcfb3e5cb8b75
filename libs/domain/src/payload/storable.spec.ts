import { findUnstorable, MAX_JSON_DEPTH, textProblem } from './storable';

function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe('findUnstorable', () => {
  it('accepts ordinary JSON, emoji (surrogate pairs) included', () => {
    expect(findUnstorable({ input: 'héllo 👋', list: [1, null, true, { x: 'y' }] })).toBeUndefined();
    expect(findUnstorable(nested(MAX_JSON_DEPTH - 1))).toBeUndefined();
  });

  it('names the field that holds a NUL character', () => {
    expect(findUnstorable({ input: [{ role: 'user', content: 'a\u0000b' }] })).toMatchObject({
      pointer: '/input/0/content',
      problem: 'nul',
      message: expect.stringContaining('/input/0/content contains a NUL character'),
    });
  });

  it('finds NUL and lone surrogates in keys, and escapes them in the pointer', () => {
    const found = findUnstorable({ metadata: { 'k\u0000': 'v' } });
    expect(found).toMatchObject({ pointer: '/metadata/k\\u0000', problem: 'nul' });
    expect(found?.message).not.toContain('\u0000');
    expect(findUnstorable({ m: { ['\uDC00']: 1 } })?.problem).toBe('lone-surrogate');
  });

  it('refuses lone high and low surrogates', () => {
    expect(textProblem('x\uD83D')).toBe('lone-surrogate');
    expect(textProblem('\uDE00x')).toBe('lone-surrogate');
    expect(textProblem('\uD83D\uDE00')).toBeUndefined();
  });

  it('refuses nesting past the bound without overflowing its own stack', () => {
    expect(findUnstorable(nested(MAX_JSON_DEPTH + 1))).toMatchObject({ problem: 'too-deep' });
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findUnstorable(deep)?.problem).toBe('too-deep');
  });
});
