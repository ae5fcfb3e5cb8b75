import { z } from 'zod';
import { IsoTime, Principal } from './ids';

/**
 * Webhook deliveries and the signing secret over request/reply with the orchestrator
 * (`<prefix>.webhooks.<tenant>.<op>`; the gateway's `/v1/webhooks` relays to it). The tenant is the
 * subject's, never the body's.
 */
export const WebhookDeliveryStatus = z.enum(['pending', 'delivered', 'dead']);

export const WebhookDeliveryView = z
  .object({
    deliveryId: z.string().describe('The receiver dedups on it (header Ratchet-Webhook-Id)'),
    url: z.string(),
    status: WebhookDeliveryStatus,
    attempts: z.number().int(),
    runId: z.string().optional(),
    runStatus: z.string().optional().describe('How the run ended'),
    lastError: z.string().nullable(),
    lastStatus: z.number().int().nullable().describe("The receiver's last HTTP status"),
    nextAttemptAt: IsoTime.nullable().describe('pending only'),
    createdAt: IsoTime,
    deliveredAt: IsoTime.nullable(),
  })
  .describe('WebhookDeliveryView');
export type WebhookDeliveryView = z.infer<typeof WebhookDeliveryView>;

/** After a rotation, how long the previous secret still signs deliveries by default (a day), and at most (a week). */
export const DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS = 86_400;
export const MAX_WEBHOOK_SECRET_OVERLAP_SECONDS = 7 * 86_400;

export const WebhooksRequest = z.discriminatedUnion('op', [
  z.strictObject({
    op: z.literal('deliveries'),
    principal: Principal,
    status: WebhookDeliveryStatus.optional(),
    limit: z.number().int().min(1).max(500).default(100),
  }),
  z.strictObject({ op: z.literal('secret'), principal: Principal }),
  z.strictObject({
    op: z.literal('rotate-secret'),
    principal: Principal,
    overlapSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_WEBHOOK_SECRET_OVERLAP_SECONDS)
      .default(DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS),
  }),
]);
export type WebhooksRequest = z.input<typeof WebhooksRequest>;

export const WebhooksReply = z.union([
  z.object({ ok: z.literal(true), deliveries: z.array(WebhookDeliveryView) }),
  z.object({
    ok: z.literal(true),
    secret: z.string(),
    scheme: z.string(),
    /** During a rotation's overlap: until when the previous secret also signs deliveries. */
    previousValidUntil: IsoTime.nullable().optional(),
  }),
  z.object({
    ok: z.literal(false),
    error: z.object({
      code: z.enum(['invalid', 'forbidden', 'unavailable']),
      message: z.string(),
      problems: z.array(z.string()).optional(),
    }),
  }),
]);
export type WebhooksReply = z.infer<typeof WebhooksReply>;

/** What `secret` answers as the scheme: how to verify a delivery (docs/webhooks.md). */
export const WEBHOOK_SIGNATURE_SCHEME =
  'Ratchet-Webhook-Signature: v1=hex(HMAC-SHA256(secret, Ratchet-Webhook-Timestamp + "." + raw body)); after a rotation, one v1= per valid secret, space-separated: accept if any verifies';
