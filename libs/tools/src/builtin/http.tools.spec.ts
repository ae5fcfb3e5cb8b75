import { callKind } from '../tool';
import { httpRequest } from './http.tools';

describe('http.request kinds', () => {
  const kind = (method: string, honoursIdempotencyKey?: boolean) =>
    callKind(
      httpRequest,
      { url: 'https://api.example.com/x', method },
      honoursIdempotencyKey === undefined ? {} : { honoursIdempotencyKey },
    );

  it('is idempotent for GET and HEAD', () => {
    expect([kind('GET'), kind('HEAD')]).toEqual(['idempotent', 'idempotent']);
  });

  it('is at-most-once for a mutating method unless the agent says its hosts honour Idempotency-Key', () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expect(kind(method)).toBe('at-most-once');
      expect(kind(method, false)).toBe('at-most-once');
      expect(kind(method, true)).toBe('idempotent');
    }
  });
});
