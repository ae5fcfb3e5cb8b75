import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import {
  DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS,
  IsoTime,
  MAX_WEBHOOK_SECRET_OVERLAP_SECONDS,
  WebhookDeliveryStatus,
  WebhookDeliveryView,
  type WebhooksReply,
} from '@ratchet/contracts';
import { z } from 'zod';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { READ_ROLES, RequireAnyRole, RequireRoles } from '../auth/roles.decorator';
import { Backends } from '../backends/backends';
import { backendProblem } from '@ratchet/http-edge';
import { parseRequest } from '@ratchet/http-edge';
import { ApiJsonBody, ApiJsonResponse, ApiProblems } from '@ratchet/http-edge';

const DeliveriesQuery = z.object({
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
 * The tenant's completion webhooks (docs/webhooks.md), relayed to the orchestrator
 * (`<prefix>.webhooks.<tenant>.<op>`): the deliveries, dead ones included, and the secret that signs
 * them (admins only).
 */
@ApiTags('webhooks')
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly backends: Backends) {}

  @Get('deliveries')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: "The tenant's webhook deliveries, newest first (`status=dead`: those that gave up)" })
  @ApiQuery({ name: 'status', required: false, enum: ['pending', 'delivered', 'dead'] })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 500 } })
  @ApiJsonResponse(200, 'The deliveries', 'WebhookDeliveryList', WebhookDeliveryList)
  async deliveries(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Query() rawQuery: unknown) {
    const { status, limit } = parseRequest(DeliveriesQuery, rawQuery, { in: 'query' });
    const reply = await this.backends.webhooks(principal.tenantId, {
      op: 'deliveries',
      principal: asPrincipal(principal),
      limit,
      ...(status ? { status } : {}),
    });
    return { deliveries: ok(reply, 'deliveries').deliveries };
  }

  @Get('secret')
  @RequireRoles('admin')
  @ApiOperation({ summary: "The tenant's webhook signing secret (made on first use), and the signature scheme" })
  @ApiJsonResponse(200, 'The secret', 'WebhookSecret', WebhookSecret)
  async secret(@CurrentPrincipal() principal: AuthenticatedPrincipal) {
    const reply = ok(
      await this.backends.webhooks(principal.tenantId, { op: 'secret', principal: asPrincipal(principal) }),
      'secret',
    );
    return { secret: reply.secret, scheme: reply.scheme, previousValidUntil: reply.previousValidUntil ?? null };
  }

  @Post('secret/rotate')
  @HttpCode(200)
  @RequireRoles('admin')
  @ApiOperation({
    summary: "Rotate the tenant's webhook signing secret",
    description:
      'Makes a new secret. The previous one keeps signing deliveries, next to the new one, for `overlapSeconds` (default a day): the signature header carries a `v1=` per secret, so receivers can move to the new secret at their pace.',
  })
  @ApiJsonBody('WebhookSecretRotation', WebhookSecretRotation)
  @ApiJsonResponse(200, 'The new secret', 'WebhookSecret', WebhookSecret)
  @ApiProblems({ 400: 'Invalid body: overlapSeconds is not a whole number from 0 to 604800' })
  async rotate(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Body() body: unknown) {
    const { overlapSeconds } = parseRequest(WebhookSecretRotation, body ?? {}, { in: 'body' });
    const reply = ok(
      await this.backends.webhooks(principal.tenantId, {
        op: 'rotate-secret',
        principal: asPrincipal(principal),
        overlapSeconds,
      }),
      'secret',
    );
    return { secret: reply.secret, scheme: reply.scheme, previousValidUntil: reply.previousValidUntil ?? null };
  }
}

function asPrincipal(principal: AuthenticatedPrincipal) {
  return { id: principal.principalId, roles: [...principal.roles] };
}

type Ok<K extends string> = Extract<WebhooksReply, { ok: true } & Record<K, unknown>>;

function ok<K extends 'deliveries' | 'secret'>(reply: WebhooksReply, key: K): Ok<K> {
  if (!reply.ok) throw backendProblem(reply.error, 'webhooks');
  if (!(key in reply)) throw new Error(`webhooks reply without ${key}`);
  return reply as Ok<K>;
}
