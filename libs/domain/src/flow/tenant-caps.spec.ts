import {
  capRefusalCode,
  capRefusalMessage,
  capReservation,
  hasCaps,
  reserveUnderCaps,
  TENANT_CAP_CODE,
  TENANT_COST_CAP_CODE,
} from './tenant-caps';

const counts = (day: number, month = day, dayCost = 0, monthCost = dayCost) => ({ day, month, dayCost, monthCost });

describe('a tenant cap', () => {
  it('given room for the reservation on every cap, when a call asks, then it goes', () => {
    expect(
      reserveUnderCaps({ dayTokens: 1000, monthTokens: 5000, dayCost: 100 }, counts(400, 4000, 50), {
        tokens: 600,
        cost: 50,
      }),
    ).toEqual({ go: true });
  });

  it('given a day with too little room for the tokens, when a call asks, then it is refused naming the day cap', () => {
    expect(reserveUnderCaps({ dayTokens: 1000, monthTokens: 5000 }, counts(401), { tokens: 600, cost: 1 })).toEqual({
      go: false,
      cap: 'dayTokens',
      limit: 1000,
      used: 401,
      needs: 600,
    });
  });

  it('given room today but not this month, when a call asks, then the month cap refuses it', () => {
    const d = reserveUnderCaps({ dayTokens: 1000, monthTokens: 5000 }, counts(0, 4500), { tokens: 600, cost: 1 });
    expect(d).toMatchObject({ go: false, cap: 'monthTokens', limit: 5000, used: 4500 });
  });

  it('given tokens to spare but not money, when a call asks, then the cost cap refuses it', () => {
    const d = reserveUnderCaps({ dayTokens: 10_000, dayCost: 25_000_000 }, counts(10, 10, 24_999_000), {
      tokens: 100,
      cost: 2_000,
    });
    expect(d).toEqual({ go: false, cap: 'dayCost', limit: 25_000_000, used: 24_999_000, needs: 2_000 });
    if (d.go) throw new Error('expected a refusal');
    expect(capRefusalCode(d.cap)).toBe(TENANT_COST_CAP_CODE);
    expect(capRefusalMessage(d)).toBe(
      'the daily cost cap is 25; 24.999 is used or reserved today (UTC) and this model call may cost up to 0.002, so it was not made',
    );
  });

  it('given a cost cap, when a call of an unpriced model asks, then it is refused: its cost cannot be bounded', () => {
    const d = reserveUnderCaps({ monthCost: 1_000_000 }, counts(0), { tokens: 1, cost: undefined });
    expect(d).toMatchObject({ go: false, cap: 'monthCost', needs: undefined });
    if (d.go) throw new Error('expected a refusal');
    expect(capRefusalMessage(d, 'mystery-1')).toBe(
      'the monthly cost cap is 1, and the model mystery-1 has no price in MODEL_PRICES, so what its call costs cannot be held to it; it was not made',
    );
    // Without a cost cap, an unpriced model is held to the token caps only.
    expect(reserveUnderCaps({ dayTokens: 10 }, counts(0), { tokens: 5, cost: undefined })).toEqual({ go: true });
  });

  it('given no caps, when a call of any size asks, then it goes', () => {
    expect(reserveUnderCaps({}, counts(10 ** 9), { tokens: 10 ** 6, cost: undefined })).toEqual({ go: true });
    expect(hasCaps({})).toBe(false);
    expect(hasCaps(undefined)).toBe(false);
    expect(hasCaps({ monthTokens: 1 })).toBe(true);
    expect(hasCaps({ dayCost: 1 })).toBe(true);
  });

  it('reserves the prompt at a token per byte and the answer at its maximum; a refusal says what it counted', () => {
    expect(capReservation(2_000, 256)).toBe(2_256);
    const refused = reserveUnderCaps({ dayTokens: 100 }, counts(90), { tokens: 20, cost: 0 });
    if (refused.go) throw new Error('expected a refusal');
    expect(capRefusalCode(refused.cap)).toBe(TENANT_CAP_CODE);
    expect(capRefusalMessage(refused)).toBe(
      'the daily cap is 100 tokens; 90 are used or reserved today (UTC) and this model call may use up to 20, so it was not made',
    );
  });
});
