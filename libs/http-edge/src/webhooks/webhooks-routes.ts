import {
  DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS,
  IsoTime,
  MAX_WEBHOOK_SECRET_OVERLAP_SECONDS,
  WebhookDeliveryStatus,
  WebhookDeliveryView,
  type WebhooksRequest,
} from '@ratchet/contracts';
import { z } from 'zod';
import type { Backends } from '../backends/backends';
import { okWith, principalOf, type EdgePrincipal } from '../route-helpers';
import { parseRequest } from '../problem-details';

export const DeliveriesQuery = z.object({
  status: WebhookDeliveryStatus.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export const WebhookDeliveryList = z
  .object({ deliveries: z.array(WebhookDeliveryView) })
  .describe('WebhookDeliveryList');
export const WebhookSecret = z
  .object({
    secret: z.string(),
    scheme: z.string().describe('How a receiver verifies a delivery'),
    previousValidUntil: IsoTime.nullable().describe(
      'After a rotation: until when the previous secret also signs deliveries (null: it does not)',
    ),
  })
  .describe('WebhookSecret');
export const WebhookSecretRotation = z
  .strictObject({
    overlapSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_WEBHOOK_SECRET_OVERLAP_SECONDS)
      .default(DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS)
      .describe('How long the previous secret keeps signing deliveries next to the new one (0: stop at once)'),
  })
  .describe('WebhookSecretRotation');

/**
 * The tenant's completion webhooks (`/v1/webhooks`, docs/webhooks.md), relayed to the orchestrator
 * (`<prefix>.webhooks.<tenant>.<op>`): the deliveries, dead ones included, and the secret that signs them.
 */
export class WebhooksRoutes {
  constructor(private readonly backends: Pick<Backends, 'webhooks'>) {}

  async deliveries(principal: EdgePrincipal, rawQuery: unknown) {
    const { status, limit } = parseRequest(DeliveriesQuery, rawQuery, { in: 'query' });
    const reply = await this.call(
      principal,
      { op: 'deliveries', principal: principalOf(principal), limit, ...(status ? { status } : {}) },
      'deliveries',
    );
    return { deliveries: reply.deliveries };
  }

  async secret(principal: EdgePrincipal) {
    return secretView(await this.call(principal, { op: 'secret', principal: principalOf(principal) }, 'secret'));
  }

  /** A new secret; the previous one keeps signing next to it for `overlapSeconds`. */
  async rotate(principal: EdgePrincipal, body: unknown) {
    const { overlapSeconds } = parseRequest(WebhookSecretRotation, body ?? {}, { in: 'body' });
    const request: WebhooksRequest = { op: 'rotate-secret', principal: principalOf(principal), overlapSeconds };
    return secretView(await this.call(principal, request, 'secret'));
  }

  private async call<K extends 'deliveries' | 'secret'>(principal: EdgePrincipal, request: WebhooksRequest, key: K) {
    return okWith(await this.backends.webhooks(principal.tenantId, request), key, 'webhooks', 'webhooks');
  }
}

function secretView(reply: { secret: string; scheme: string; previousValidUntil?: string | null | undefined }) {
  return { secret: reply.secret, scheme: reply.scheme, previousValidUntil: reply.previousValidUntil ?? null };
}
