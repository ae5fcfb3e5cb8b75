import { costMicros, priceOf } from './model-prices';

const TABLE = {
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  scripted: { input: 1, output: 4 },
};

describe('model prices', () => {
  it('given a reported model name, when priced, then the longest table name it starts with prices it', () => {
    expect(priceOf(TABLE, 'gpt-4o-2024-08-06')).toEqual({ input: 2.5, output: 10 });
    expect(priceOf(TABLE, 'gpt-4o-mini-2024-07-18')).toEqual({ input: 0.15, output: 0.6 });
    expect(priceOf(TABLE, 'scripted')).toEqual({ input: 1, output: 4 });
  });

  it('given a model the table does not name, then it is unpriced', () => {
    expect(priceOf(TABLE, 'claude-3')).toBeUndefined();
    expect(priceOf({}, 'gpt-4o')).toBeUndefined();
  });

  it('costs tokens in millionths of the currency, rounded to a whole millionth', () => {
    // 1,000 input at 2.5 per million + 200 output at 10 per million = 0.0045 = 4,500 millionths.
    expect(costMicros({ input: 2.5, output: 10 }, { inputTokens: 1_000, outputTokens: 200 })).toBe(4_500);
    expect(costMicros({ input: 0.15, output: 0.6 }, { inputTokens: 3, outputTokens: 1 })).toBe(1);
    expect(costMicros({ input: 0, output: 0 }, { inputTokens: 10 ** 6, outputTokens: 10 ** 6 })).toBe(0);
  });
});
