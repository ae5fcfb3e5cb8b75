/**
 * A deployment's prices per model (docs/flow-control.md "Prices and cost"), the rule, pure: a price is per
 * million tokens, input and output apart, in the table's one currency; a cost is kept in millionths of that
 * currency (whole numbers: sums never drift). A model is priced by the longest name in the table it starts
 * with, so `gpt-4o` prices the `gpt-4o-2024-08-06` a provider reports, and `gpt-4o-mini` its own.
 */

/** Per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** The price of `model`: the table's entry for the longest name it starts with (undefined: unpriced). */
export function priceOf(table: PriceTable, model: string): ModelPrice | undefined {
  let best: string | undefined;
  for (const name of Object.keys(table))
    if (model.startsWith(name) && (best === undefined || name.length > best.length)) best = name;
  return best === undefined ? undefined : table[best];
}

/** What tokens cost at `price`, in millionths of the currency (a token at a price per million costs the price in millionths). */
export function costMicros(price: ModelPrice, tokens: { inputTokens: number; outputTokens: number }): number {
  return Math.round(tokens.inputTokens * price.input + tokens.outputTokens * price.output);
}
