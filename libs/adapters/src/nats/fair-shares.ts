/**
 * Fair shares of one consumer's handler slots between keys (tenants). The rule, as plain functions over
 * a small state, so the consume loop only does what it says:
 *
 * - all keys together run at most `maxInFlight` handlers; a key runs at most `perKeyInFlight` of them
 *   while another key has messages waiting — alone, it may use every free slot (work-conserving);
 * - a message that cannot run waits in its key's line (`hold`), unacked: the loop keeps pulling, so
 *   another key's message behind a flood in the stream is reached, and runs at the first free slot;
 * - a key's line holds at most `perKeyHeld` messages, and all lines together `maxHeld` (a key without
 *   a line always gets one); beyond that a message is handed back to the stream for later (`defer`: a
 *   nak with a delay about as long as its key's line takes to drain), unless it has used half its
 *   deliveries already — then it waits in the line anyway, so deferring never uses up the budget a real
 *   failure needs;
 * - when a slot frees, the next line served is the one after the key served last (round robin), and a
 *   key over its share is passed over while another key waits.
 */
export interface FairShareLimits {
  /** Handlers of all keys at once. */
  maxInFlight: number;
  /** Handlers of one key at once (≤ maxInFlight). */
  perKeyInFlight: number;
  /** Messages of one key waiting for a slot (beyond: deferred). */
  perKeyHeld: number;
  /** Messages of all keys waiting (beyond: deferred, except a key's first). Keep it below the consumer's max_ack_pending. */
  maxHeld: number;
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

/** Defaults: half the slots per key; lines of 4× a key's share (at least 64), 4× the slots in all (at least 256). */
export function fairShareLimits(
  maxInFlight: number,
  perKeyInFlight?: number,
  held: { perKey?: number; total?: number } = {},
): FairShareLimits {
  const max = Math.max(1, Math.floor(maxInFlight));
  const perKey = Math.min(max, Math.max(1, Math.floor(perKeyInFlight ?? Math.ceil(max / 2))));
  const perKeyHeld = Math.max(1, Math.floor(held.perKey ?? Math.max(64, 4 * perKey)));
  const maxHeld = Math.max(1, Math.floor(held.total ?? Math.max(256, 4 * max)));
  return { maxInFlight: max, perKeyInFlight: perKey, perKeyHeld, maxHeld };
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
  if (waiting === 0) return 'hold';
  if (waiting < s.limits.perKeyHeld && heldCount(s) < s.limits.maxHeld) return 'hold';
  return mayDefer(delivery.deliveryCount, delivery.maxDeliver) ? 'defer' : 'hold';
}

/** A message may be handed back only while it has used less than half of its deliveries. */
export function mayDefer(deliveryCount: number, maxDeliver: number): boolean {
  return maxDeliver <= 0 || deliveryCount < Math.floor(maxDeliver / 2);
}

/**
 * How long a deferred message stays away: about as long as its key's line takes to drain at the slots
 * the key runs now (`meanHandlerMs` measured by the caller), half as long again for each earlier
 * deferral (the estimate was short), between 100 ms and 10 s.
 */
export function deferDelayMs<T>(
  s: FairShareState<T>,
  key: string,
  deferralsBefore: number,
  meanHandlerMs: number,
): number {
  const running = s.running.get(key) ?? 0;
  const ahead = (s.held.get(key)?.length ?? 0) + running;
  const drain = (ahead * Math.max(0, meanHandlerMs)) / Math.max(1, running);
  const delay = drain * 1.5 ** Math.min(Math.max(0, deferralsBefore), 12);
  return Math.round(Math.min(10_000, Math.max(100, delay)));
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
  if (s.inFlight >= s.limits.maxInFlight) return false;
  if ((s.running.get(key) ?? 0) < s.limits.perKeyInFlight) return true;
  // Over its share: only while no other key waits.
  for (const other of s.held.keys()) if (other !== key) return false;
  return true;
}
