/**
 * A tool module: a deployment lists it in `TOOL_MODULES` (the tool executor's, and the orchestrator's
 * for `local` tools), and every exported `defineTool` tool joins the catalog. No fork of Ratchet.
 *
 *   TOOL_MODULES=./examples/tool-module/shop.tools.ts   (a path from the working directory, or a package name)
 */
import { z } from 'zod';
import { defineTool, ToolError } from '@ratchet/tools';

/** Pure and cheap: runs inside the orchestrator's decision (a local tool, ADR 0010). */
export const vat = defineTool({
  name: 'shop.vat',
  description: 'VAT (20 %) for an amount in cents.',
  kind: 'pure',
  local: true,
  timeoutMs: 200,
  input: z.object({ cents: z.number().int().describe('Amount in cents') }),
  async execute({ cents }) {
    return { vat: Math.round(cents * 0.2) };
  },
});

const PRICES: Record<string, number> = { tea: 450, coffee: 380, cake: 520 };

/** Pure, on the tool executor: looks up a price list the module carries. */
export const quote = defineTool({
  name: 'shop.quote',
  description: 'The price of an item in cents (tea, coffee or cake).',
  kind: 'pure',
  input: z.object({
    item: z.enum(['tea', 'coffee', 'cake']).describe('What to price'),
    quantity: z.number().int().min(1).max(100).default(1),
  }),
  async execute({ item, quantity }) {
    const each = PRICES[item];
    if (each === undefined) throw new ToolError('shop.unknown_item', `no price for ${item}`);
    return { item, quantity, cents: each * quantity };
  },
});
