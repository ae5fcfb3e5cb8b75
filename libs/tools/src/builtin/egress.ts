import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Where `http.request` may connect. Addresses inside the deployment — loopback, link-local (and the
 * cloud metadata service at 169.254.169.254), private (RFC 1918, fc00::/7), carrier-grade NAT,
 * unspecified, multicast, reserved, and IPv6 forms that embed any of them — are refused, checked on
 * the address the socket connects to (so a name that resolves to one, or resolves to one the second
 * time it is asked, is refused too). Only the deployment can allow some of them, by host name or
 * CIDR (`HTTP_TOOL_ALLOW_INTERNAL`); an agent's `allowHosts` never can.
 */
const INTERNAL_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];
const INTERNAL_V6: [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::', 96], // IPv4-compatible (deprecated): ::127.0.0.1
  ['64:ff9b::', 96], // NAT64: may embed any IPv4 address
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const INTERNAL = new BlockList();
for (const [net, prefix] of INTERNAL_V4) INTERNAL.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of INTERNAL_V6) INTERNAL.addSubnet(net, prefix, 'ipv6');

/** Whether an IP address is inside the deployment (see INTERNAL_V4 / INTERNAL_V6). */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true; // not an address at all: nothing to connect to safely
  // BlockList matches an IPv4-mapped IPv6 address (::ffff:127.0.0.1, ::ffff:7f00:1) against the IPv4 rules.
  return INTERNAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class EgressRefusedError extends Error {
  readonly code = 'ERR_EGRESS_REFUSED';
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(
      `${host} resolves to ${address}, an address inside the deployment (loopback, link-local, private or reserved); ` +
        'only the deployment can allow it (HTTP_TOOL_ALLOW_INTERNAL)',
    );
    this.name = 'EgressRefusedError';
  }
}

export type Resolver = (hostname: string, callback: (error: Error | null, addresses: LookupAddress[]) => void) => void;

const systemResolver: Resolver = (hostname, callback) =>
  dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => callback(error, addresses ?? []));

export interface EgressPolicyOptions {
  /** Host names (`svc.internal`, `*.corp.example`) and addresses / CIDRs (`10.1.0.0/16`, `::1`) allowed anyway. */
  allow?: readonly string[];
  /** DNS resolution (injected in tests). Default: the system resolver. */
  resolve?: Resolver;
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

export class EgressPolicy {
  private readonly hosts: string[] = [];
  private readonly nets = new BlockList();
  private readonly resolve: Resolver;

  constructor(options: EgressPolicyOptions = {}) {
    this.resolve = options.resolve ?? systemResolver;
    for (const raw of options.allow ?? []) {
      const entry = raw.trim().toLowerCase();
      if (entry === '') continue;
      const [net, prefixText] = entry.replace(/^\[|\]$/g, '').split('/');
      const family = isIP(net ?? '');
      if (family !== 0) {
        const prefix = prefixText === undefined ? (family === 4 ? 32 : 128) : Number(prefixText);
        if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128))
          throw new Error(`"${raw}": not a CIDR (expected an address or address/prefix)`);
        this.nets.addSubnet(net!, prefix, family === 4 ? 'ipv4' : 'ipv6');
      } else if (prefixText !== undefined || !/^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/.test(entry)) {
        throw new Error(`"${raw}": expected a host name (or *.suffix), an IP address or a CIDR`);
      } else {
        this.hosts.push(entry.replace(/\.$/, ''));
      }
    }
  }

  /** Parses `HTTP_TOOL_ALLOW_INTERNAL` (comma-separated); throws naming a bad entry. */
  static fromList(list: string, resolve?: Resolver): EgressPolicy {
    return new EgressPolicy({ allow: list.split(','), ...(resolve ? { resolve } : {}) });
  }

  /** Whether a connection to `address` (reached as `host`) may be made. */
  allows(host: string, address: string): boolean {
    if (!isInternalAddress(address)) return true;
    const h = host
      .toLowerCase()
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '');
    if (this.hosts.some((p) => (p.startsWith('*.') ? h.endsWith(p.slice(1)) : h === p))) return true;
    const family = isIP(address);
    return family !== 0 && this.nets.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }

  /** Refuses a URL host that is itself an address inside the deployment (no lookup happens for those). */
  checkLiteral(host: string): void {
    const bare = host.replace(/^\[|\]$/g, '');
    if (isIP(bare) !== 0 && !this.allows(bare, bare)) throw new EgressRefusedError(host, bare);
  }

  /**
   * A `lookup` for net/tls connect (undici's `connect.lookup`): resolves, and refuses when any address
   * the name has is inside the deployment. The socket connects to an address this returned, so the
   * check cannot be raced by a second resolution (DNS rebinding).
   */
  readonly lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    this.resolve(hostname, (error, addresses) => {
      if (error) return callback(error, options.all ? [] : '');
      const usable = addresses.filter((a) => !family || a.family === family);
      const refused = usable.find((a) => !this.allows(hostname, a.address));
      if (refused) return callback(new EgressRefusedError(hostname, refused.address), options.all ? [] : '');
      if (usable.length === 0) {
        const none = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
        return callback(none, options.all ? [] : '');
      }
      if (options.all) return callback(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
