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

  it("takes the tenant's own max for a slot in place of the agent's, and ignores settings of slots it does not declare", () => {
    expect(runSlotsOf(slots, { customerId: '42', org: 'acme' }, 'support', { customer: 1, gone: 3 })).toEqual({
      slots: [
        { key: 'customer=42', max: 1 },
        { key: 'org=acme', max: 20 },
      ],
    });
    expect(runSlotsOf(slots, { org: 'acme' }, 'support', { customer: 2 })).toMatchObject({
      error: { message: expect.stringContaining('(slot "customer", at most 2 at once)') },
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
    const customer = [{ name: 'customer', key: 'metadata.customerId', max: 5 }];
    expect(runSlotsOf(customer, { customerId: '1' }, 'support', {})).toEqual({
      slots: [{ key: 'customer=1', max: 5 }],
    });
    // A setting named like a prototype field is not a setting of a slot named so.
    expect(runSlotsOf(customer, { customerId: '1' }, 'support', JSON.parse('{"__proto__": {"customer": 1}}'))).toEqual({
      slots: [{ key: 'customer=1', max: 5 }],
    });
  });
});
