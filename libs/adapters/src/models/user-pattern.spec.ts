import { compileUserPattern, UserPatternError } from './user-pattern';

describe('compileUserPattern', () => {
  it('matches with named groups and a leading (?i), like the rules agents are written with', () => {
    expect(compileUserPattern('(?i)weather in (?<city>[A-Za-z]+)').match('What is the WEATHER in Oslo?')).toEqual({
      city: 'Oslo',
    });
    expect(compileUserPattern('^fetch (?<url>\\S+)$').match('nothing')).toBeUndefined();
  });

  it('evaluates a catastrophic pattern in linear time: (a+)+$ on a long non-matching input returns', () => {
    // A backtracking engine would need ~2^n steps here and never return within the test's timeout.
    const input = `${'a'.repeat(20_000)}!`;
    expect(compileUserPattern('(a+)+$').match(input)).toBeUndefined();
    expect(compileUserPattern('^(\\w+\\s?)*$').match(`${'word '.repeat(5_000)}!`)).toBeUndefined();
  });

  it('refuses what it cannot match in linear time, naming the pattern', () => {
    expect(() => compileUserPattern('(a)\\1')).toThrow(UserPatternError);
    expect(() => compileUserPattern('a(?=b)')).toThrow(/pattern "a\(\?=b\)" is not a supported regular expression/);
  });
});
