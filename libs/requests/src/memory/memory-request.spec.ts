import { parseRequest, routeOf } from './memory-request';

const bytes = (body: unknown) => new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body));
const principal = { id: 'alice', roles: [] };

describe('memory request parsing', () => {
  it('takes tenant and op from the subject only', () => {
    expect(routeOf('ratchet', 'ratchet.memory.acme.forget-subject')).toEqual({
      ok: true,
      value: { tenant: 'acme', op: 'forget-subject' },
    });
    expect(routeOf('ratchet', 'ratchet.memory.acme.drop')).toMatchObject({
      error: { code: 'invalid', field: 'subject' },
    });
    expect(routeOf('ratchet', 'other.memory.acme.get')).toMatchObject({ error: { field: 'subject' } });
  });

  it('applies defaults of a valid request', () => {
    expect(parseRequest('list', bytes({ principal }))).toEqual({
      ok: true,
      value: { principal, namespacePrefix: '', limit: 50 },
    });
  });

  it('names the field at fault, including a stray key', () => {
    expect(parseRequest('get', bytes({ principal, namespace: 'a', key: '' }))).toMatchObject({
      error: { code: 'invalid', field: 'key' },
    });
    expect(parseRequest('get', bytes({ principal, namespace: 'a', key: 'k', tenantId: 'x' }))).toMatchObject({
      error: { field: 'tenantId', message: expect.stringContaining('tenantId') },
    });
    expect(parseRequest('search', bytes({ principal, query: 'q', limit: 1000 }))).toMatchObject({
      error: { field: 'limit' },
    });
    expect(parseRequest('put', bytes('{'))).toMatchObject({ error: { field: 'body' } });
    expect(parseRequest('put', bytes([1]))).toMatchObject({ error: { field: 'body' } });
  });
});
