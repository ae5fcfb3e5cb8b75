import { checkLimits, DEFAULT_MEMORY_LIMITS, utf8Length } from './memory.limits';
import { flattenValue, truncateUtf8 } from './memory.text';

describe('size limits', () => {
  it('counts UTF-8 bytes, not characters', () => {
    expect(utf8Length('abc')).toBe(3);
    expect(utf8Length('é')).toBe(2);
    expect(utf8Length('€')).toBe(3);
    expect(utf8Length('😀')).toBe(4);
  });

  it('accepts an item at the limits', () => {
    const limits = { maxKeyBytes: 3, maxValueBytes: 5, maxTextBytes: 2 };
    expect(checkLimits({ key: 'abc', value: 'abc', text: 'ab' }, limits)).toBeUndefined();
  });

  it.each([
    ['key', { key: 'k'.repeat(257), value: 1 }, 256],
    ['value', { key: 'k', value: { blob: 'x'.repeat(65_536) } }, 65_536],
    ['text', { key: 'k', value: 1, text: 'é'.repeat(8193) }, 16_384],
  ])('refuses a %s over its limit, naming the field and the limit', (field, input, limit) => {
    expect(checkLimits(input, DEFAULT_MEMORY_LIMITS)).toEqual({
      ok: false,
      error: { code: 'too_large', field, limit, message: expect.stringContaining(`limit is ${limit} bytes`) },
    });
  });
});

describe('searchable text', () => {
  it('flattens keys and scalars in document order, skipping nulls', () => {
    expect(flattenValue({ theme: 'dark', langs: ['en', 'fr'], beta: true, n: 2, x: null })).toBe(
      'theme dark langs en fr beta true n 2 x',
    );
    expect(flattenValue('just text')).toBe('just text');
    expect(flattenValue({ ['a\u0000']: 'b\u0000c' })).toBe('a bc');
  });

  it('truncates by bytes without splitting a character', () => {
    expect(truncateUtf8('aé😀b', 4)).toBe('aé');
    expect(truncateUtf8('aé😀b', 7)).toBe('aé😀');
    expect(truncateUtf8('short', 100)).toBe('short');
  });
});
