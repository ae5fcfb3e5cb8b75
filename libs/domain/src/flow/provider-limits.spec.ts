import {
  admit,
  estimateCallTokens,
  fitsAt,
  takeTurn,
  type Admission,
  type LimitWindow,
  type ProviderLimit,
} from './provider-limits';

const WINDOW = 10_000;
const GUARD = 500;
const SPAN = WINDOW + GUARD;
const NOW = 1_000_000;

function ask(
  limit: Partial<ProviderLimit>,
  admissions: Admission[],
  extra: { inFlight?: number; estimate?: number } = {},
) {
  return admit(
    { name: 'openai', windowMs: WINDOW, ...limit },
    {
      admissions,
      inFlight: extra.inFlight ?? 0,
      now: NOW,
      estimate: extra.estimate ?? 100,
      guardMs: GUARD,
      concurrentRetryMs: 1_000,
    },
  );
}

const at = (...offsets: number[]): Admission[] => offsets.map((o) => ({ at: NOW + o, tokens: 100 }));

describe('requests per window', () => {
  it('given room in the window, when a call asks, then it goes now', () => {
    expect(ask({ requests: 3 }, at(-5_000, -1_000))).toEqual({ go: true, at: NOW });
  });

  it('given a full window, when a call asks, then it is reserved for when the oldest admission leaves the window and its guard', () => {
    expect(ask({ requests: 3 }, at(-9_000, -5_000, -1_000))).toEqual({
      go: false,
      at: NOW - 9_000 + SPAN,
      by: 'requests',
      reserve: true,
    });
  });

  it('given admissions older than the window and its guard, when a call asks, then they do not count', () => {
    expect(ask({ requests: 1 }, at(-SPAN, -SPAN - 1))).toEqual({ go: true, at: NOW });
  });

  it('given calls reserved ahead, when a call asks, then it goes after them, never before', () => {
    // Two slots of three are reserved in the future; the window at NOW has room, but the queue comes first.
    expect(ask({ requests: 3 }, at(-20_000, 2_000, 4_000))).toMatchObject({ go: false, at: NOW + 4_000 });
  });

  it('given a queue of reservations, when each takes the next slot, then no window of the span ever holds more than the limit', () => {
    const admissions: Admission[] = [];
    for (let i = 0; i < 20; i++) {
      const d = ask({ requests: 3 }, admissions);
      admissions.push({ at: d.at, tokens: 100 });
    }
    for (const a of admissions) {
      expect(admissions.filter((b) => b.at >= a.at && b.at < a.at + SPAN).length).toBeLessThanOrEqual(3);
    }
    expect(admissions.filter((a) => a.at === NOW)).toHaveLength(3);
  });
});

describe('tokens per window', () => {
  it('given the estimate fits, when a call asks, then it goes now', () => {
    expect(ask({ tokens: 1_000 }, at(-1_000, -500), { estimate: 800 })).toEqual({ go: true, at: NOW });
  });

  it('given the estimate does not fit, when a call asks, then it waits until enough of the oldest admissions left', () => {
    const admissions = [
      { at: NOW - 9_000, tokens: 300 },
      { at: NOW - 8_000, tokens: 300 },
      { at: NOW - 1_000, tokens: 300 },
    ];
    expect(ask({ tokens: 1_000 }, admissions, { estimate: 500 })).toEqual({
      go: false,
      at: NOW - 8_000 + SPAN,
      by: 'tokens',
      reserve: true,
    });
  });

  it('given an estimate larger than the whole limit, when a call asks, then it goes alone once the window is empty', () => {
    expect(ask({ tokens: 1_000 }, at(-9_000, -1_000), { estimate: 5_000 })).toMatchObject({
      go: false,
      at: NOW - 1_000 + SPAN,
      by: 'tokens',
    });
    expect(ask({ tokens: 1_000 }, [], { estimate: 5_000 })).toEqual({ go: true, at: NOW });
  });

  it('given both bounds, when tokens bind later than requests, then the later time wins and names tokens', () => {
    const admissions = [
      { at: NOW - 9_000, tokens: 10 },
      { at: NOW - 2_000, tokens: 900 },
    ];
    expect(ask({ requests: 2, tokens: 1_000 }, admissions, { estimate: 200 })).toMatchObject({
      at: NOW - 2_000 + SPAN,
      by: 'tokens',
    });
  });
});

describe('calls at once', () => {
  it('given every slot in flight, when a call asks, then it asks again later without a reservation', () => {
    expect(ask({ concurrent: 2 }, [], { inFlight: 2 })).toEqual({
      go: false,
      at: NOW + 1_000,
      by: 'concurrent',
      reserve: false,
    });
  });

  it('given a free slot, when a call asks, then it goes', () => {
    expect(ask({ concurrent: 2 }, [], { inFlight: 1 })).toEqual({ go: true, at: NOW });
  });
});

describe('a call back after its reserved turn passed', () => {
  const limit: ProviderLimit = { name: 'openai', windowMs: WINDOW, requests: 2 };

  it('given room in every window that would hold it, when it asks to go now, then it fits', () => {
    expect(fitsAt(limit, at(-9_000, 20_000), NOW, 100, GUARD)).toBe(true);
  });

  it('given a reservation ahead whose window would then hold one too many, when it asks to go now, then it does not fit', () => {
    // Alone at NOW the past window has room, but the window starting at NOW - 1 s also holds the call at NOW + 3 s.
    expect(fitsAt(limit, at(-1_000, 3_000), NOW, 100, GUARD)).toBe(false);
  });

  it('given tokens, when the window would pass them, then it does not fit', () => {
    expect(fitsAt({ ...limit, requests: undefined, tokens: 500 }, at(-1_000, 2_000), NOW, 400, GUARD)).toBe(false);
    expect(fitsAt({ ...limit, requests: undefined, tokens: 500 }, at(-1_000, 2_000), NOW, 300, GUARD)).toBe(true);
    expect(fitsAt({ ...limit, requests: undefined, tokens: 500 }, at(-1_000), NOW, 100, GUARD)).toBe(true);
  });
});

describe("a call's turn in a batch", () => {
  const limit: ProviderLimit = { name: 'openai', windowMs: WINDOW, requests: 2 };
  const options = { guardMs: GUARD, concurrentRetryMs: 1_000 };
  type Own = { id: string; at: number; went: boolean };
  /** As the store reads it: the window holds the call's own rows too. */
  const turn = (admissions: Admission[], own: Own[], callId = 'c') =>
    takeTurn(
      limit,
      { admissions: [...admissions, ...own.map(row)].sort((a, b) => a.at - b.at), inFlight: 0 },
      { callId, estimate: 100, tenantId: 'a' },
      own.filter((o) => o.id === callId || o.id.startsWith(`${callId}:again:`)),
      NOW,
      options,
    );
  const row = (o: Own): Admission => ({ ...o, tokens: 100, tenantId: 'a' });

  it('given a reservation not yet due, when the call comes back, then it waits for the same turn, keeps its place and writes nothing', () => {
    const reserved = { id: 'c', at: NOW + 3_000, went: false };
    const t = turn([], [reserved]);
    expect(t).toMatchObject({ decision: { go: false, at: NOW + 3_000, reserve: true }, admissionId: 'c', writes: [] });
    expect(t.window.admissions).toEqual([row(reserved)]);
  });

  it("given another call's reservation in the batch, when a call is decided before it, then it sees that place", () => {
    // Without d's reservation the window would have room now; with it, c goes behind it.
    const t = turn(at(-1_000), [{ id: 'd', at: NOW + 3_000, went: false }]);
    expect(t.decision).toEqual({ go: false, at: NOW - 1_000 + SPAN, by: 'requests', reserve: true });
  });

  it('given its reservation is due, when it comes back, then it goes at its reserved time and the window holds it once', () => {
    const t = turn(at(-5_000), [{ id: 'c', at: NOW - 100, went: false }]);
    expect(t.decision).toEqual({ go: true, at: NOW });
    expect(t.writes).toEqual([{ kind: 'go', id: 'c', at: NOW - 100 }]);
    expect(t.window).toEqual({
      admissions: [...at(-5_000), row({ id: 'c', at: NOW - 100, went: true })],
      inFlight: 1,
    });
  });

  it('given it came back past its turn and the guard into a full window, then its place is given back and it is reserved anew', () => {
    const t = turn(at(-2_000, -1_500), [{ id: 'c', at: NOW - 2 * GUARD, went: false }]);
    expect(t.decision).toMatchObject({ go: false, reserve: true, at: NOW - 2_000 + SPAN });
    expect(t.writes).toEqual([
      { kind: 'delete', id: 'c' },
      { kind: 'insert', id: 'c', at: NOW - 2_000 + SPAN, went: false },
    ]);
    expect(t.window.admissions.filter((a) => a.id === 'c')).toEqual([
      row({ id: 'c', at: NOW - 2_000 + SPAN, went: false }),
    ]);
  });

  it('given the call went before, when it asks again, then it asks under a new id and its first request still counts', () => {
    const t = turn([], [{ id: 'c', at: NOW - 1_000, went: true }]);
    expect(t.admissionId).toBe('c:again:1');
    expect(t.decision).toEqual({ go: true, at: NOW });
    expect(t.window.admissions).toHaveLength(2);
  });
});

describe('fairness between tenants', () => {
  const limit: ProviderLimit = { name: 'openai', windowMs: WINDOW, requests: 3 };
  const options = { guardMs: GUARD, concurrentRetryMs: 1_000 };
  /** Each call of `tenants` asks in turn, as one batch would decide them; what each was told. */
  function queue(tenants: string[], admissions: Admission[] = [], l: ProviderLimit = limit) {
    let window: LimitWindow = { admissions, inFlight: 0 };
    return tenants.map((tenantId, i) => {
      const t = takeTurn(l, window, { callId: `${tenantId}-${i}`, estimate: 100, tenantId }, [], NOW, options);
      window = t.window;
      return t.decision;
    });
  }

  it("given a tenant's flood, when each call asks, then it holds a window's worth of reservations and the rest wait for its last one without a place", () => {
    const told = queue(Array.from({ length: 12 }, () => 'a'));
    const three = (d: object) => [d, d, d];
    expect(told.slice(0, 3)).toEqual(three({ go: true, at: NOW }));
    // Three reservations: when the first three leave the window.
    expect(told.slice(3, 6)).toEqual(three({ go: false, at: NOW + SPAN, by: 'requests', reserve: true }));
    // The rest ask again when the last reservation is due, a window's worth at a time.
    expect(told.slice(6, 9)).toEqual(three({ go: false, at: NOW + SPAN, by: 'share', reserve: false }));
    expect(told.slice(9)).toEqual(three({ go: false, at: NOW + 2 * SPAN, by: 'share', reserve: false }));
  });

  it("given a tenant's flood, when another tenant's call asks, then it is reserved behind a window of the flood's calls, not behind the flood", () => {
    const told = queue([...Array.from({ length: 50 }, () => 'a'), 'b', 'b']);
    // b's calls take the turns right after a's three reservations: the next window.
    expect(told.slice(50)).toEqual([
      { go: false, at: NOW + 2 * SPAN, by: 'requests', reserve: true },
      { go: false, at: NOW + 2 * SPAN, by: 'requests', reserve: true },
    ]);
    expect(told.filter((d) => !d.go && d.reserve)).toHaveLength(3 + 2);
  });

  it('given its reservations overdue (their calls late), when a call of the tenant asks, then it waits at least the retry period, never asks again at once', () => {
    const overdue = [0, 1, 2].map((i) => ({ at: NOW - 100 - i, tokens: 100, tenantId: 'a', went: false }));
    expect(queue(['a'], [...at(-1_000, -900, -800), ...overdue])).toEqual([
      { go: false, at: NOW + 1_000, by: 'share', reserve: false },
    ]);
  });

  it("given a tokens limit, when the tenant's reservations would pass a window's tokens, then its call waits without a place", () => {
    const tokens: ProviderLimit = { name: 'openai', windowMs: WINDOW, tokens: 250 };
    const told = queue(['a', 'a', 'a', 'a', 'a', 'b'], [], tokens);
    expect(told.map((d) => (d.go ? 'go' : d.by))).toEqual(['go', 'go', 'tokens', 'tokens', 'share', 'tokens']);
  });
});

it('estimates a call as its prompt at 4 characters a token plus the answer it may write', () => {
  expect(estimateCallTokens(4_001, 256)).toBe(1_001 + 256);
});
