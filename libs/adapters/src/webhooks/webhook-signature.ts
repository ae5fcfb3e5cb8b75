import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The signature scheme of completion webhooks (docs/webhooks.md), in one place for the sender and for
 * receivers written in TypeScript: HMAC-SHA256 with the tenant's secret over `<timestamp>.<body>`
 * (the timestamp in Unix seconds, the body exactly as sent), hex, in `Ratchet-Webhook-Signature: v1=<hex>`.
 * While a rotated secret's overlap lasts the header carries one signature per secret, separated by a
 * space (`v1=<new> v1=<old>`): a receiver accepts the delivery when any of them verifies.
 */
export const WEBHOOK_HEADERS = {
  id: 'Ratchet-Webhook-Id',
  timestamp: 'Ratchet-Webhook-Timestamp',
  signature: 'Ratchet-Webhook-Signature',
  attempt: 'Ratchet-Webhook-Attempt',
} as const;

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The header's value: a signature by each secret (the current first), space-separated. */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return secrets.map((secret) => signWebhook(secret, timestamp, body)).join(' ');
}

/**
 * True when `signature` (the header's value) signs `timestamp.body` with `secret` and the timestamp is
 * within `toleranceSeconds` of `now` (a replayed old delivery is refused). Compares in constant time.
 */
export function verifyWebhook(
  secret: string,
  headers: { timestamp: string; signature: string },
  body: string,
  now = new Date(),
  toleranceSeconds = 300,
): boolean {
  const timestamp = Number(headers.timestamp);
  if (!Number.isInteger(timestamp) || Math.abs(now.getTime() / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, timestamp, body));
  return headers.signature
    .split(' ')
    .map((s) => Buffer.from(s))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected));
}
