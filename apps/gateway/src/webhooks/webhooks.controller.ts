import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { WebhookDeliveryStatus, WebhookDeliveryView, type WebhooksReply } from '@ratchet/contracts';
import { z } from 'zod';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { READ_ROLES, RequireAnyRole, RequireRoles } from '../auth/roles.decorator';
import { Backends } from '../backends/backends';
import { backendProblem } from '../http/backend-errors';
import { parseRequest } from '../http/problem-details';
import { ApiJsonResponse } from '../openapi/zod-schemas';

const DeliveriesQuery = z.object({
  status: WebhookDeliveryStatus.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export const WebhookDeliveryList = z
  .object({ deliveries: z.array(WebhookDeliveryView) })
  .describe('WebhookDeliveryList');
export const WebhookSecret = z
  .object({ secret: z.string(), scheme: z.string().describe('How a receiver verifies a delivery') })
  .describe('WebhookSecret');

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
    return { secret: reply.secret, scheme: reply.scheme };
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
