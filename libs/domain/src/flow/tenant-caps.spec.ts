import { capRefusalMessage, capReservation, hasCaps, reserveUnderCaps } from './tenant-caps';

describe('a tenant token cap', () => {
  it('given room for the reservation on every cap, when a call asks, then it goes', () => {
    expect(reserveUnderCaps({ dayTokens: 1000, monthTokens: 5000 }, { day: 400, month: 4000 }, 600)).toEqual({
      go: true,
    });
  });

  it('given a day with too little room, when a call asks, then it is refused naming the day cap', () => {
    expect(reserveUnderCaps({ dayTokens: 1000, monthTokens: 5000 }, { day: 401, month: 401 }, 600)).toEqual({
      go: false,
      cap: 'dayTokens',
      limit: 1000,
      used: 401,
      needs: 600,
    });
  });

  it('given room today but not this month, when a call asks, then the month cap refuses it', () => {
    const d = reserveUnderCaps({ dayTokens: 1000, monthTokens: 5000 }, { day: 0, month: 4500 }, 600);
    expect(d).toMatchObject({ go: false, cap: 'monthTokens', limit: 5000, used: 4500 });
  });

  it('given no caps, when a call of any size asks, then it goes', () => {
    expect(reserveUnderCaps({}, { day: 10 ** 9, month: 10 ** 9 }, 10 ** 6)).toEqual({ go: true });
    expect(hasCaps({})).toBe(false);
    expect(hasCaps(undefined)).toBe(false);
    expect(hasCaps({ monthTokens: 1 })).toBe(true);
  });

  it('reserves the prompt at a token per byte and the answer at its maximum; a refusal says what it counted', () => {
    expect(capReservation(2_000, 256)).toBe(2_256);
    const refused = reserveUnderCaps({ dayTokens: 100 }, { day: 90, month: 90 }, 20);
    if (refused.go) throw new Error('expected a refusal');
    expect(capRefusalMessage(refused)).toBe(
      'the daily cap is 100 tokens; 90 are used or reserved today (UTC) and this model call may use up to 20, so it was not made',
    );
  });
});
