import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Which webhook URLs a deployment may call. Loopback, private, link-local (cloud metadata),
 * carrier-grade NAT, unspecified and multicast addresses are refused unless the deployment allows them
 * (`WEBHOOK_ALLOW_PRIVATE`, for tests and in-cluster receivers). Checked twice: on the URL when it is
 * given (a literal address, `localhost`), and on every address its host resolves to right before each
 * delivery, so a name that later points inside the network is refused too.
 */
const FORBIDDEN = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  FORBIDDEN.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  FORBIDDEN.addSubnet(net, bits, 'ipv6');

export interface WebhookAddressPolicy {
  /** Allow loopback and private addresses (never in a deployment reachable from tenants). */
  allowPrivate: boolean;
}

/** Why an address may not be called, or undefined when it may. */
export function forbiddenAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  // An IPv4 address written as IPv6 (::ffff:127.0.0.1) is the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return forbiddenAddress(mapped);
  return FORBIDDEN.check(address, family === 4 ? 'ipv4' : 'ipv6')
    ? `${address} is a loopback, private or link-local address`
    : undefined;
}

/** A problem with a webhook URL as given (scheme, literal address, localhost), or undefined. */
export function webhookUrlProblem(raw: string, policy: WebhookAddressPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `"${raw}" is not a URL`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return `${url.protocol} URLs are not allowed (http or https)`;
  if (url.username || url.password) return 'a webhook URL may not carry credentials';
  if (policy.allowPrivate) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback address`;
  const why = forbiddenAddress(host);
  return why ? `${why}; this deployment does not allow webhooks to it` : undefined;
}

/**
 * Resolves the URL's host and refuses it when any address it resolves to is forbidden. Returns the
 * problem, or undefined when it may be called.
 */
export async function resolvedWebhookProblem(raw: string, policy: WebhookAddressPolicy): Promise<string | undefined> {
  const early = webhookUrlProblem(raw, policy);
  if (early || policy.allowPrivate) return early;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return undefined;
  const addresses = await lookup(host, { all: true });
  for (const a of addresses) {
    const why = forbiddenAddress(a.address);
    if (why) return `${host} resolves to ${why}; this deployment does not allow webhooks to it`;
  }
  return undefined;
}
