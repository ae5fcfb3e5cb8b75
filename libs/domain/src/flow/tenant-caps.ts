/**
 * A tenant's caps on what its model calls use, in tokens and in cost, per UTC day and per UTC month
 * (docs/flow-control.md "Token and cost caps"), the rule, pure. Each call reserves the most it can use
 * before it is made — its prompt at one token per UTF-8 byte (no tokenizer makes a token of less than a
 * byte) and its answer at the most it may write (`max_tokens`, which the request carries), and that at its
 * model's price — and goes only when every cap has room for that on top of what is counted already
 * (answers as reported, calls in flight as reserved, calls whose worker died as reserved: they may have been
 * billed). After the call, its count becomes what the provider reported. So the count never passes a cap,
 * as long as a provider never reports more than that bound.
 */

/** The caps of one tenant; an absent one does not bound. Costs are in millionths of the price table's currency. */
export interface TenantCaps {
  /** Tokens (input + output) per UTC day at most. */
  dayTokens?: number | undefined;
  /** Tokens (input + output) per UTC month at most. */
  monthTokens?: number | undefined;
  /** Cost per UTC day at most. */
  dayCost?: number | undefined;
  /** Cost per UTC month at most. */
  monthCost?: number | undefined;
}

export type CapName = keyof TenantCaps;

/** What is counted against the caps now: the current UTC day's and month's tokens and cost. */
export interface CapCounts {
  day: number;
  month: number;
  dayCost: number;
  monthCost: number;
}

/** What one call may use at most: tokens, and their cost (undefined: its model has no price). */
export interface CapNeeds {
  tokens: number;
  cost: number | undefined;
}

export type CapDecision =
  | { go: true }
  /** The call would pass `cap`: `used` counted already, `needs` this call's reservation (undefined: unpriced). */
  | { go: false; cap: CapName; limit: number; used: number; needs: number | undefined };

/** The error code of a model call refused by its tenant's token cap (the run fails with budget `tenantTokens`). */
export const TENANT_CAP_CODE = 'tenant_cap';
/** The error code of a model call refused by its tenant's cost cap (the run fails with budget `tenantCost`). */
export const TENANT_COST_CAP_CODE = 'tenant_cost_cap';

/** Whether a call reserving `needs` fits every cap of the tenant: tokens first, the day's before the month's. */
export function reserveUnderCaps(caps: TenantCaps, counts: CapCounts, needs: CapNeeds): CapDecision {
  for (const [cap, used, need] of [
    ['dayTokens', counts.day, needs.tokens],
    ['monthTokens', counts.month, needs.tokens],
    ['dayCost', counts.dayCost, needs.cost],
    ['monthCost', counts.monthCost, needs.cost],
  ] as const) {
    const limit = caps[cap];
    // A model without a price cannot be held to a cost cap: its calls are refused while one is set.
    if (limit !== undefined && (need === undefined || used + need > limit))
      return { go: false, cap, limit, used, needs: need };
  }
  return { go: true };
}

/** Whether the tenant has a cap at all. */
export function hasCaps(caps: TenantCaps | undefined): caps is TenantCaps {
  return (
    caps !== undefined &&
    (caps.dayTokens !== undefined ||
      caps.monthTokens !== undefined ||
      caps.dayCost !== undefined ||
      caps.monthCost !== undefined)
  );
}

/** The most a call can use: its prompt at one token per byte, and its answer at its `max_tokens`. */
export function capReservation(promptBytes: number, maxOutputTokens: number): number {
  return promptBytes + maxOutputTokens;
}

/** The most a call can cost at `price` (per million tokens), in whole millionths rounded up. */
export function capReservationCost(
  price: { input: number; output: number },
  promptBytes: number,
  maxOutputTokens: number,
): number {
  return Math.ceil(promptBytes * price.input + maxOutputTokens * price.output);
}

/** The error code a refusal by `cap` is answered with. */
export function capRefusalCode(cap: CapName): string {
  return cap === 'dayCost' || cap === 'monthCost' ? TENANT_COST_CAP_CODE : TENANT_CAP_CODE;
}

/** What a refused call's failure says: which cap, what is counted, what the call needed. */
export function capRefusalMessage(d: Extract<CapDecision, { go: false }>, model?: string): string {
  const daily = d.cap === 'dayTokens' || d.cap === 'dayCost';
  const period = daily ? 'daily' : 'monthly';
  const when = daily ? 'today (UTC)' : 'this month (UTC)';
  if (d.cap === 'dayTokens' || d.cap === 'monthTokens')
    return `the ${period} cap is ${d.limit} tokens; ${d.used} are used or reserved ${when} and this model call may use up to ${d.needs}, so it was not made`;
  if (d.needs === undefined)
    return `the ${period} cost cap is ${units(d.limit)}, and the model ${model ?? '(unnamed)'} has no price in MODEL_PRICES, so what its call costs cannot be held to it; it was not made`;
  return `the ${period} cost cap is ${units(d.limit)}; ${units(d.used)} is used or reserved ${when} and this model call may cost up to ${units(d.needs)}, so it was not made`;
}

/** Millionths as the currency's units (`0.0045`, `25`). */
export function units(micros: number): string {
  return String(micros / 1_000_000);
}
