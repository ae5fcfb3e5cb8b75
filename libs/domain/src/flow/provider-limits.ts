/**
 * Limits a model provider puts on one API key (requests and tokens per window, calls at once), shared by
 * every replica that uses the key: the admission rule, pure. The store keeps the admissions of each limit
 * and serialises the decisions of one limit (docs/flow-control.md, ADR 0044).
 *
 * A call is admitted at a time `at`: now when the window has room, else the earliest time it will have
 * room — a reservation, so calls that wait are served in the order they asked and each waits once. An
 * admission occupies the window from `at` for the window plus a guard (the time between the decision and
 * the request reaching the provider), so the provider, counting arrivals, never sees more than the limit
 * in any window of its length.
 */

/** A provider key's limits; absent fields do not bound. */
export interface ProviderLimit {
  /** How the limit is named in waits, errors and metrics. */
  name: string;
  /** Requests per window at most. */
  requests?: number | undefined;
  /** Input + output tokens per window at most (estimated before a call, settled with the reported usage). */
  tokens?: number | undefined;
  /** Calls in flight at once at most. */
  concurrent?: number | undefined;
  /** The window, ms (a minute for limits "per minute"). */
  windowMs: number;
}

/** One call admitted in the window: when its request goes out (ms since the epoch; later than now: reserved) and its tokens. */
export interface Admission {
  /** The row's id (the call's, or `<call>:again:<n>`), where the caller knows it. */
  id?: string | undefined;
  at: number;
  tokens: number;
  /** The tenant whose call it is (for its share of the queue; absent: counted for nobody). */
  tenantId?: string | undefined;
  /** Its request went (false: a reservation still to be taken). */
  went?: boolean | undefined;
}

/**
 * Which of a limit's bounds made a call wait. `share`: its tenant already holds a window's worth of
 * reservations — it asks again once they have gone, so another tenant's call is never queued behind more
 * than a window of this tenant's.
 */
export type LimitBound = 'requests' | 'tokens' | 'concurrent' | 'share';

export type AdmissionDecision =
  /** Send the request now. */
  | { go: true; at: number }
  /**
   * Wait until `at`. `reserve`: the call's place at `at` is kept (requests and tokens: it goes then without
   * asking again); otherwise (calls at once) it asks again then.
   */
  | { go: false; at: number; by: LimitBound; reserve: boolean };

export interface AdmissionQuery {
  /** The limit's admissions whose window has not ended (at > now − window − guard), oldest first. */
  admissions: readonly Admission[];
  /** Calls of this limit in flight now (admitted, not ended, not expired). */
  inFlight: number;
  now: number;
  /** The call's tokens as estimated (its prompt and tools, plus the answer it may write). */
  estimate: number;
  /** How long a decision may take to reach the provider as a request, ms. */
  guardMs: number;
  /** How long a call refused by the bound on calls at once waits before it asks again, ms. */
  concurrentRetryMs: number;
}

/**
 * When a call may go. Requests: the window ending at `at` holds fewer than `requests` admissions. Tokens:
 * their sum in that window plus the estimate is at most `tokens` (a call whose estimate alone is larger
 * goes when the window is empty: it runs alone). Calls at once: checked only for a call that would go now.
 * Reservations keep their order: a call is never admitted before one reserved earlier.
 */
export function admit(limit: ProviderLimit, q: AdmissionQuery): AdmissionDecision {
  const span = limit.windowMs + q.guardMs;
  const all = q.admissions.filter((a) => a.at > q.now - span);
  let at = Math.max(q.now, all.at(-1)?.at ?? q.now);
  // Behind calls reserved earlier: the bound that made them wait.
  let by: LimitBound | undefined = at > q.now ? queueBound(limit) : undefined;
  if (limit.requests !== undefined && all.length >= limit.requests) {
    const oldestInWindow = all[all.length - limit.requests]!;
    if (oldestInWindow.at + span > at) {
      at = oldestInWindow.at + span;
      by = 'requests';
    }
  }
  if (limit.tokens !== undefined) {
    const inWindow = all.filter((a) => a.at > at - span);
    let used = inWindow.reduce((sum, a) => sum + a.tokens, 0);
    let i = 0;
    // Drop the oldest admissions (the window slides past them) until the estimate fits or none is left.
    while (used + q.estimate > limit.tokens && i < inWindow.length) {
      const leaving = inWindow[i++]!;
      used -= leaving.tokens;
      if (leaving.at + span > at) {
        at = leaving.at + span;
        by = 'tokens';
      }
    }
  }
  if (at > q.now) return { go: false, at, by: by ?? 'requests', reserve: true };
  if (limit.concurrent !== undefined && q.inFlight >= limit.concurrent)
    return { go: false, at: q.now + q.concurrentRetryMs, by: 'concurrent', reserve: false };
  return { go: true, at: q.now };
}

/** The bound a call waiting behind reservations is said to wait for. */
function queueBound(limit: ProviderLimit): LimitBound {
  return limit.requests !== undefined ? 'requests' : 'tokens';
}

/** The limit's window while one batch of calls takes its turns: each sees what the ones before it left. */
export interface LimitWindow {
  /**
   * Admissions whose window has not ended, oldest first — every row of the limit, the deciding calls'
   * own rows included (with their ids), so a call decided early in a batch sees the places of the others.
   */
  admissions: readonly Admission[];
  /** Calls in flight now. */
  inFlight: number;
  /**
   * Calls of each tenant this batch told to wait for their share (they hold no row): the next one asks
   * again a window later for every window's worth of them, so a flood's calls come back spread out.
   */
  shareWaits?: Readonly<Record<string, number>> | undefined;
}

/** A row the call already has under the limit: its reservation (not went), or a request it made before. */
export interface OwnAdmission {
  id: string;
  at: number;
  went: boolean;
}

/** What one call's turn writes: give a reservation back, let a reservation go, or admit anew. */
export type TurnWrite =
  | { kind: 'delete'; id: string }
  | { kind: 'go'; id: string; at: number }
  | { kind: 'insert'; id: string; at: number; went: boolean };

export interface Turn {
  decision: AdmissionDecision;
  /** The id the call's admission is kept (and settled) under. */
  admissionId: string;
  window: LimitWindow;
  writes: TurnWrite[];
}

/**
 * One call's turn under a limit. `own`: the rows it already has (its id, and `<id>:again:<n>` for each
 * time it was asked again after it went). A reservation not yet due is waited for again; a due one goes
 * (late by more than the guard: only if every window that would hold now has room, else it asks anew);
 * a call that went before (its worker died, the provider answered 429) asks as a new request under a new
 * id, its earlier requests still counting. The bound on calls at once is asked at the moment a call goes.
 */
export function takeTurn(
  limit: ProviderLimit,
  window: LimitWindow,
  call: { callId: string; estimate: number; tenantId: string },
  own: readonly OwnAdmission[],
  now: number,
  options: { guardMs: number; concurrentRetryMs: number },
): Turn {
  const reservation = own.find((r) => !r.went);
  // The window holds the call's own rows too (every call decided before it must see its place): the
  // reservation leaves it when the call goes or gives it back.
  const rest: LimitWindow = reservation
    ? { ...window, admissions: window.admissions.filter((a) => a.id !== reservation.id) }
    : window;
  const admitted = (id: string, at: number, went: boolean): LimitWindow => ({
    ...rest,
    admissions: [...rest.admissions, { id, at, tokens: call.estimate, tenantId: call.tenantId, went }].sort(
      (a, b) => a.at - b.at,
    ),
    inFlight: rest.inFlight + (went ? 1 : 0),
  });
  const writes: TurnWrite[] = [];
  if (reservation) {
    const id = reservation.id;
    // Not due yet: it waits for the same turn, its place kept.
    if (reservation.at > now)
      return {
        decision: { go: false, at: reservation.at, by: queueBound(limit), reserve: true },
        admissionId: id,
        window,
        writes,
      };
    const onTime = now <= reservation.at + options.guardMs;
    if (onTime || fitsAt(limit, rest.admissions, now, call.estimate, options.guardMs)) {
      if (limit.concurrent !== undefined && rest.inFlight >= limit.concurrent)
        return {
          decision: { go: false, at: now + options.concurrentRetryMs, by: 'concurrent', reserve: false },
          admissionId: id,
          window: rest,
          writes: [{ kind: 'delete', id }],
        };
      const at = onTime ? reservation.at : now;
      return {
        decision: { go: true, at: now },
        admissionId: id,
        window: admitted(id, at, true),
        writes: [{ kind: 'go', id, at }],
      };
    }
    writes.push({ kind: 'delete', id });
  }
  const wentBefore = own.filter((r) => r.went).length;
  const id = reservation ? reservation.id : wentBefore > 0 ? `${call.callId}:again:${wentBefore}` : call.callId;
  const decision = admit(limit, {
    ...rest,
    now,
    estimate: call.estimate,
    guardMs: options.guardMs,
    concurrentRetryMs: options.concurrentRetryMs,
  });
  if (!decision.go && !decision.reserve) return { decision, admissionId: id, window: rest, writes };
  const ahead = rest.shareWaits?.[call.tenantId] ?? 0;
  const share =
    !decision.go &&
    shareTaken(limit, rest.admissions, call, {
      earliest: now + options.concurrentRetryMs,
      ahead,
      guardMs: options.guardMs,
    });
  if (share)
    return {
      decision: share,
      admissionId: id,
      window: { ...rest, shareWaits: { ...rest.shareWaits, [call.tenantId]: ahead + 1 } },
      writes,
    };
  return {
    decision,
    admissionId: id,
    window: admitted(id, decision.at, decision.go),
    writes: [...writes, { kind: 'insert', id, at: decision.at, went: decision.go }],
  };
}

/**
 * Fairness between tenants (docs/flow-control.md#fairness-between-tenants): a tenant holds at most a
 * window's worth of reservations — as many as `requests`, as many tokens as `tokens`. A call that would
 * reserve past that takes no place in the queue; it waits until its tenant's last reservation and asks
 * again then. So a call of another tenant is reserved behind at most a window of each other tenant's
 * calls, however many they have waiting, and a tenant alone still books the limit one window ahead
 * (nothing of the limit is left unused). It waits at least until `earliest` (reservations overdue, their
 * calls late, must not make it ask again at once), and a window more for every window's worth of its
 * tenant's calls told the same before it (`ahead`), so they do not all ask again at once only for most to
 * wait again. Undefined: the call may reserve.
 */
export function shareTaken(
  limit: ProviderLimit,
  admissions: readonly Admission[],
  call: { estimate: number; tenantId: string },
  when: { earliest: number; ahead: number; guardMs: number },
): AdmissionDecision | undefined {
  const held = admissions.filter((a) => a.tenantId === call.tenantId && a.went === false);
  if (held.length === 0) return undefined;
  const full =
    (limit.requests !== undefined && held.length >= limit.requests) ||
    (limit.tokens !== undefined && held.reduce((n, a) => n + a.tokens, 0) + call.estimate > limit.tokens);
  if (!full) return undefined;
  const perWindow = limit.requests ?? Math.max(1, Math.floor((limit.tokens ?? 0) / Math.max(1, call.estimate)));
  const later = Math.floor(when.ahead / perWindow) * (limit.windowMs + when.guardMs);
  const last = held.reduce((t, a) => Math.max(t, a.at), when.earliest);
  return { go: false, at: last + later, by: 'share', reserve: false };
}

/**
 * Whether a call may go at `at` among admissions already made (some reserved later): every window of the
 * span that holds `at` stays within the limit's requests and tokens. For a call that came back after its
 * reserved turn had passed (its worker was late): it goes now if that fits, instead of behind the queue.
 */
export function fitsAt(
  limit: ProviderLimit,
  admissions: readonly Admission[],
  at: number,
  estimate: number,
  guardMs: number,
): boolean {
  const span = limit.windowMs + guardMs;
  const near = [...admissions.filter((a) => a.at > at - span && a.at < at + span), { at, tokens: estimate }].sort(
    (a, b) => a.at - b.at,
  );
  // Every window that holds `at` starts at an admission in (at − span, at]: check each.
  for (const start of near) {
    if (start.at > at) break;
    const inside = near.filter((a) => a.at >= start.at && a.at < start.at + span);
    if (limit.requests !== undefined && inside.length > limit.requests) return false;
    if (limit.tokens !== undefined && inside.length > 1 && inside.reduce((n, a) => n + a.tokens, 0) > limit.tokens)
      return false;
  }
  return true;
}

/** What the model is sent and may write, in tokens, about 4 characters a token (as `approxTokens`). */
export function estimateCallTokens(promptChars: number, maxOutputTokens: number): number {
  return Math.ceil(promptChars / 4) + maxOutputTokens;
}
