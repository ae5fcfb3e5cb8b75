import type { LookupAddress } from 'node:dns';
import { EgressPolicy, EgressRefusedError, isInternalAddress, type Resolver } from './egress';

const fixed =
  (answers: Record<string, string[]>): Resolver =>
  (hostname, callback) =>
    callback(
      null,
      (answers[hostname] ?? []).map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    );

function lookupAll(policy: EgressPolicy, host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    policy.lookup(host, { all: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses as LookupAddress[]),
    ),
  );
}

describe('isInternalAddress', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.5',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.169.254',
    '0.0.0.0',
    '255.255.255.255',
    '::1',
    '::',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:a9fe:a9fe',
    '::127.0.0.1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    '64:ff9b::7f00:1',
  ])('refuses %s', (address) => expect(isInternalAddress(address)).toBe(true));

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])(
    'lets %s through',
    (address) => expect(isInternalAddress(address)).toBe(false),
  );
});

describe('EgressPolicy', () => {
  it('refuses a name that resolves to loopback, and one with any internal address among its answers', async () => {
    const policy = new EgressPolicy({
      resolve: fixed({ 'evil.example': ['127.0.0.1'], 'mixed.example': ['93.184.216.34', '10.0.0.1'] }),
    });
    await expect(lookupAll(policy, 'evil.example')).rejects.toBeInstanceOf(EgressRefusedError);
    await expect(lookupAll(policy, 'mixed.example')).rejects.toThrow(/10\.0\.0\.1/);
  });

  it('checks the answer the connection uses: a name that rebinds to loopback on the next lookup is refused then', async () => {
    let asked = 0;
    const rebinding: Resolver = (_host, callback) => {
      asked++;
      callback(null, [{ address: asked === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }]);
    };
    const policy = new EgressPolicy({ resolve: rebinding });
    await expect(lookupAll(policy, 'rebind.example')).resolves.toEqual([{ address: '93.184.216.34', family: 4 }]);
    await expect(lookupAll(policy, 'rebind.example')).rejects.toThrow(/127\.0\.0\.1/);
    expect(asked).toBe(2);
  });

  it('lets the deployment allow named hosts and CIDRs, never more', async () => {
    const policy = EgressPolicy.fromList(
      'svc.internal, *.corp.example, 10.1.0.0/16, ::1',
      fixed({ 'svc.internal': ['10.9.9.9'], 'a.corp.example': ['192.168.0.7'], 'other.internal': ['10.9.9.9'] }),
    );
    await expect(lookupAll(policy, 'svc.internal')).resolves.toHaveLength(1);
    await expect(lookupAll(policy, 'a.corp.example')).resolves.toHaveLength(1);
    await expect(lookupAll(policy, 'other.internal')).rejects.toBeInstanceOf(EgressRefusedError);
    expect(policy.allows('x', '10.1.2.3')).toBe(true);
    expect(policy.allows('x', '::ffff:10.1.2.3')).toBe(true);
    expect(policy.allows('x', '10.2.0.1')).toBe(false);
    expect(policy.allows('x', '::1')).toBe(true);
    expect(policy.allows('x', '127.0.0.1')).toBe(false);
  });

  it('refuses address literals before any connection, and names a bad allowance entry', () => {
    const policy = new EgressPolicy();
    expect(() => policy.checkLiteral('[::1]')).toThrow(EgressRefusedError);
    expect(() => policy.checkLiteral('169.254.169.254')).toThrow(/169\.254\.169\.254/);
    expect(() => policy.checkLiteral('example.com')).not.toThrow();
    expect(() => EgressPolicy.fromList('10.0.0.0/33')).toThrow(/10\.0\.0\.0\/33/);
    expect(() => EgressPolicy.fromList('not a host')).toThrow(/not a host/);
  });
});
