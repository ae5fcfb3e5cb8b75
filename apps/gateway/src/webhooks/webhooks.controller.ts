import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import {
  ApiJsonBody,
  ApiJsonResponse,
  ApiProblems,
  WebhookDeliveryList,
  WebhookSecret,
  WebhookSecretRotation,
  WebhooksRoutes,
} from '@ratchet/http-edge';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { READ_ROLES, RequireAnyRole, RequireRoles } from '../auth/roles.decorator';

/**
 * The tenant's completion webhooks (docs/webhooks.md), relayed to the orchestrator
 * (`<prefix>.webhooks.<tenant>.<op>`): the deliveries, dead ones included, and the secret that signs
 * them (admins only).
 */
@ApiTags('webhooks')
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly routes: WebhooksRoutes) {}

  @Get('deliveries')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: "The tenant's webhook deliveries, newest first (`status=dead`: those that gave up)" })
  @ApiQuery({ name: 'status', required: false, enum: ['pending', 'delivered', 'dead'] })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 500 } })
  @ApiJsonResponse(200, 'The deliveries', 'WebhookDeliveryList', WebhookDeliveryList)
  deliveries(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Query() rawQuery: unknown) {
    return this.routes.deliveries(principal, rawQuery);
  }

  @Get('secret')
  @RequireRoles('admin')
  @ApiOperation({ summary: "The tenant's webhook signing secret (made on first use), and the signature scheme" })
  @ApiJsonResponse(200, 'The secret', 'WebhookSecret', WebhookSecret)
  secret(@CurrentPrincipal() principal: AuthenticatedPrincipal) {
    return this.routes.secret(principal);
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
  rotate(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Body() body: unknown) {
    return this.routes.rotate(principal, body);
  }
}
