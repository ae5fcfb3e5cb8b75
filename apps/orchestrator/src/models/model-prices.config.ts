import { z } from 'zod';
import type { PriceTable } from '@ratchet/domain';

const Price = z
  .object({
    input: z.number().nonnegative().max(1_000_000),
    output: z.number().nonnegative().max(1_000_000),
  })
  .strict();

const EXPECTED =
  'expected a JSON object of prices per million tokens by model name, e.g. {"gpt-4o":{"input":2.5,"output":10},"gpt-4o-mini":{"input":0.15,"output":0.6}}';

/**
 * The prices of the demo's scripted model, so a deployment with no table still shows what cost looks like.
 * They are not any provider's: a deployment sets its own `MODEL_PRICES` for the models its agents use.
 */
export const DEMO_MODEL_PRICES: PriceTable = { scripted: { input: 1, output: 4 } };

/** `MODEL_PRICES`: prices per million tokens (input, output) by model name (a prefix of the reported model). */
export function envModelPrices() {
  return z.string({ error: EXPECTED }).transform((value, ctx): PriceTable => {
    let raw: unknown;
    try {
      raw = JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: `${EXPECTED} (not JSON)` });
      return z.NEVER;
    }
    const parsed = z.record(z.string().min(1).max(256), Price).safeParse(raw);
    if (!parsed.success) {
      const first = parsed.error.issues[0]!;
      ctx.addIssue({
        code: 'custom',
        message: `price ${first.path.join('.') || '(root)'}: ${first.message}; ${EXPECTED}`,
      });
      return z.NEVER;
    }
    return parsed.data;
  });
}
