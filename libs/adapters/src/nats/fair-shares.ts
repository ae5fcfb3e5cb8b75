/**
 * Fair shares of one consumer's handler slots between keys (tenants). The rule, as plain functions over
 * a small state, so the consume loop only does what it says:
 *
 * - a key runs at most `perKeyInFlight` handlers at once, and all keys together at most `maxInFlight`;
 * - a message whose key is at its bound waits in that key's line (`hold`), unacked: the loop keeps
 *   pulling, so another key's message behind it in the stream is reached and run at once;
 * - a key's line holds at most `perKeyHeld` messages; beyond that a message is handed back to the
 *   stream for later (`defer`: a nak with a delay), unless it has used half its deliveries already —
 *   then it waits in the line anyway, so deferring never uses up the budget a real failure needs;
 * - when a slot frees, the next line served is the one after the key served last (round robin), so a
 *   key with a long line cannot take every slot that frees.
 *
 * Work-conserving within a key's bound: one key alone uses `perKeyInFlight` slots, not fewer.
 */
export interface FairShareLimits {
  /** Handlers of all keys at once. */
  maxInFlight: number;
  /** Handlers of one key at once (≤ maxInFlight). */
  perKeyInFlight: number;
  /** Messages of one key waiting for a slot (beyond: deferred). */
  perKeyHeld: number;
}

export interface FairShareState<T> {
  readonly limits: FairShareLimits;
  /** Running handlers per key (keys with none are absent). */
  readonly running: Map<string, number>;
  /** Waiting messages per key, in arrival order (keys with none are absent). Map order is the round. */
  readonly held: Map<string, T[]>;
  /** The key whose line was served last (the round continues after it). */
  lastServed: string | undefined;
  inFlight: number;
}

export type Admission = 'run' | 'hold' | 'defer';

export function fairShareLimits(maxInFlight: number, perKeyInFlight?: number, perKeyHeld?: number): FairShareLimits {
  const max = Math.max(1, Math.floor(maxInFlight));
  const perKey = Math.min(max, Math.max(1, Math.floor(perKeyInFlight ?? Math.ceil(max / 2))));
  return { maxInFlight: max, perKeyInFlight: perKey, perKeyHeld: Math.max(1, Math.floor(perKeyHeld ?? 4 * perKey)) };
}

export function initialFairShares<T>(limits: FairShareLimits): FairShareState<T> {
  return { limits, running: new Map(), held: new Map(), lastServed: undefined, inFlight: 0 };
}

/**
 * What to do with a message of `key` that just arrived. `deliveryCount` and `maxDeliver` (≤ 0: no
 * bound) decide whether it may still be deferred. A key with messages already waiting runs nothing new
 * ahead of them: its messages keep their arrival order.
 */
export function admit<T>(
  s: FairShareState<T>,
  key: string,
  delivery: { deliveryCount: number; maxDeliver: number },
): Admission {
  const waiting = s.held.get(key)?.length ?? 0;
  if (waiting === 0 && canRun(s, key)) return 'run';
  if (waiting < s.limits.perKeyHeld) return 'hold';
  return mayDefer(delivery.deliveryCount, delivery.maxDeliver) ? 'defer' : 'hold';
}

/** A message may be handed back only while it has used less than half of its deliveries. */
export function mayDefer(deliveryCount: number, maxDeliver: number): boolean {
  return maxDeliver <= 0 || deliveryCount < Math.floor(maxDeliver / 2);
}

/** How long a deferred message stays away: 500 ms, doubling with each deferral, at most 10 s. */
export function deferDelayMs(deferralsBefore: number): number {
  return Math.min(10_000, 500 * 2 ** Math.min(Math.max(0, deferralsBefore), 10));
}

export function started<T>(s: FairShareState<T>, key: string): void {
  s.running.set(key, (s.running.get(key) ?? 0) + 1);
  s.inFlight++;
}

export function finished<T>(s: FairShareState<T>, key: string): void {
  const n = (s.running.get(key) ?? 0) - 1;
  if (n > 0) s.running.set(key, n);
  else s.running.delete(key);
  s.inFlight = Math.max(0, s.inFlight - 1);
}

export function hold<T>(s: FairShareState<T>, key: string, item: T): void {
  const line = s.held.get(key);
  if (line) line.push(item);
  else s.held.set(key, [item]);
}

/**
 * The next waiting message to run now, taken out of its line, or undefined when no line may run: the
 * first line after `lastServed` (in round order) whose key is below its bound.
 */
export function nextToRun<T>(s: FairShareState<T>): { key: string; item: T } | undefined {
  if (s.inFlight >= s.limits.maxInFlight || s.held.size === 0) return undefined;
  const keys = [...s.held.keys()];
  const after = s.lastServed === undefined ? -1 : keys.indexOf(s.lastServed);
  // Keys are in the order their lines were opened; when the last one served has no line any more, the
  // round starts again from the first: fair enough, and no key is passed over twice in a row.
  for (let i = 1; i <= keys.length; i++) {
    const key = keys[(after + i + keys.length) % keys.length]!;
    if (!canRun(s, key)) continue;
    const line = s.held.get(key)!;
    const item = line.shift()!;
    if (line.length === 0) s.held.delete(key);
    s.lastServed = key;
    return { key, item };
  }
  return undefined;
}

/** Takes every waiting message out (on stop: they are handed back to the stream). */
export function drainHeld<T>(s: FairShareState<T>): T[] {
  const all = [...s.held.values()].flat();
  s.held.clear();
  return all;
}

export function heldCount<T>(s: FairShareState<T>): number {
  let n = 0;
  for (const line of s.held.values()) n += line.length;
  return n;
}

function canRun<T>(s: FairShareState<T>, key: string): boolean {
  return s.inFlight < s.limits.maxInFlight && (s.running.get(key) ?? 0) < s.limits.perKeyInFlight;
}
