import { runSlotsOf } from './run-slots';

describe('the concurrency keys of a run', () => {
  const slots = [
    { name: 'customer', key: 'metadata.customerId', max: 5 },
    { name: 'org', key: 'metadata.org', max: 20 },
  ];

  it('names each slot with the value of its field in the request metadata, with its max', () => {
    expect(runSlotsOf(slots, { customerId: '42', org: 'acme', other: 'x' }, 'support')).toEqual({
      slots: [
        { key: 'customer=42', max: 5 },
        { key: 'org=acme', max: 20 },
      ],
    });
  });

  it('holds no key for an agent without slots', () => {
    expect(runSlotsOf(undefined, { customerId: '42' }, 'support')).toEqual({ slots: [] });
    expect(runSlotsOf([], {}, 'support')).toEqual({ slots: [] });
  });

  it('refuses a request whose metadata lacks (or leaves empty) a slot field, naming the slot and the field', () => {
    for (const metadata of [{ org: 'acme' }, { customerId: '', org: 'acme' }] as Record<string, string>[])
      expect(runSlotsOf(slots, metadata, 'support')).toEqual({
        error: {
          code: 'request.slot_key_missing',
          message:
            'agent "support" counts its runs per metadata.customerId (slot "customer", at most 5 at once): the request\'s metadata has no "customerId"',
        },
      });
  });

  it('does not read fields of the object prototype as metadata', () => {
    const proto = [{ name: 'p', key: 'metadata.constructor', max: 1 }];
    expect(runSlotsOf(proto, {}, 'support')).toMatchObject({ error: { code: 'request.slot_key_missing' } });
  });
});
