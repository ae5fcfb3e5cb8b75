import { linkTo, spanContextOf } from './spans';

const traceId = '0af7651916cd43dd8448eb211c80319c';
const spanId = 'b7ad6b7169203331';

describe('span contexts from stored traceparents', () => {
  it('reads trace id, span id, the sampled flag and the tracestate', () => {
    const ctx = spanContextOf({ traceparent: `00-${traceId}-${spanId}-01`, tracestate: 'vendor=x' });
    expect(ctx).toMatchObject({ traceId, spanId, traceFlags: 1, isRemote: true });
    expect(ctx?.traceState?.get('vendor')).toBe('x');
    expect(spanContextOf(`00-${traceId}-${spanId}-00`)?.traceFlags).toBe(0);
  });

  it('a missing, malformed or all-zero traceparent names no span, so nothing is linked', () => {
    expect(spanContextOf(undefined)).toBeUndefined();
    expect(spanContextOf('garbage')).toBeUndefined();
    expect(spanContextOf(`00-${'0'.repeat(32)}-${spanId}-01`)).toBeUndefined();
    expect(linkTo(null, { 'ratchet.link.reason': 'x' })).toBeUndefined();
    expect(linkTo(`00-${traceId}-${spanId}-01`, { 'ratchet.link.reason': 'x' })).toEqual({
      context: expect.objectContaining({ traceId, spanId }),
      attributes: { 'ratchet.link.reason': 'x' },
    });
  });
});
