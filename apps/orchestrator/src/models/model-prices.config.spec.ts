import { envModelPrices } from './model-prices.config';

describe('MODEL_PRICES', () => {
  it('takes prices per million tokens by model name', () => {
    expect(envModelPrices().parse('{"gpt-4o":{"input":2.5,"output":10}}')).toEqual({
      'gpt-4o': { input: 2.5, output: 10 },
    });
  });

  it('refuses what is not a table of prices, naming the problem', () => {
    expect(envModelPrices().safeParse('gpt-4o=2.5').error?.issues[0]?.message).toMatch(/not JSON/);
    expect(envModelPrices().safeParse('{"gpt-4o":{"input":-1,"output":10}}').error?.issues[0]?.message).toMatch(
      /^price gpt-4o\.input: /,
    );
    expect(envModelPrices().safeParse('{"gpt-4o":{"input":1}}').error?.issues[0]?.message).toMatch(
      /^price gpt-4o\.output: /,
    );
  });
});
