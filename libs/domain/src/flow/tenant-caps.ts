/**
 * A tenant's caps on the tokens its model calls use, per UTC day and per UTC month (docs/flow-control.md
 * "Token caps"), the rule, pure. Each call reserves the most it can use before it is made — its prompt at
 * one token per UTF-8 byte (no tokenizer makes a token of less than a byte) and its answer at the most it
 * may write (`max_tokens`, which the request carries) — and goes only when every cap has room for that on
 * top of what is counted already (answers as reported, calls in flight as reserved, calls whose worker died
 * as reserved: they may have been billed). After the call, its count becomes what the provider reported.
 * So the count never passes a cap, as long as a provider never reports more than that bound.
 */

/** The caps of one tenant; an absent one does not bound. */
export interface TenantCaps {
  /** Tokens (input + output) per UTC day at most. */
  dayTokens?: number | undefined;
  /** Tokens (input + output) per UTC month at most. */
  monthTokens?: number | undefined;
}

export type CapName = keyof TenantCaps;

/** What is counted against the caps now: the current UTC day's and month's tokens. */
export interface CapCounts {
  day: number;
  month: number;
}

export type CapDecision =
  | { go: true }
  /** The call would pass `cap`: `used` counted already, `needs` this call's reservation. */
  | { go: false; cap: CapName; limit: number; used: number; needs: number };

/** The error code of a model call refused by its tenant's cap (the run fails with budget `tenantTokens`). */
export const TENANT_CAP_CODE = 'tenant_cap';

/** Whether a call reserving `needs` tokens fits every cap of the tenant, the day's first. */
export function reserveUnderCaps(caps: TenantCaps, counts: CapCounts, needs: number): CapDecision {
  for (const [cap, used] of [
    ['dayTokens', counts.day],
    ['monthTokens', counts.month],
  ] as const) {
    const limit = caps[cap];
    if (limit !== undefined && used + needs > limit) return { go: false, cap, limit, used, needs };
  }
  return { go: true };
}

/** Whether the tenant has a cap at all. */
export function hasCaps(caps: TenantCaps | undefined): caps is TenantCaps {
  return caps !== undefined && (caps.dayTokens !== undefined || caps.monthTokens !== undefined);
}

/** The most a call can use: its prompt at one token per byte, and its answer at its `max_tokens`. */
export function capReservation(promptBytes: number, maxOutputTokens: number): number {
  return promptBytes + maxOutputTokens;
}

/** What a refused call's failure says: which cap, what is counted, what the call needed. */
export function capRefusalMessage(d: Extract<CapDecision, { go: false }>): string {
  const period = d.cap === 'dayTokens' ? 'daily' : 'monthly';
  const when = d.cap === 'dayTokens' ? 'today (UTC)' : 'this month (UTC)';
  return `the ${period} cap is ${d.limit} tokens; ${d.used} are used or reserved ${when} and this model call may use up to ${d.needs}, so it was not made`;
}
