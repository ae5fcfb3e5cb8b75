import { Body, Controller, Delete, Get, Param, Put, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  ApiJsonBody,
  ApiJsonResponse,
  ApiPathParams,
  ApiProblems,
  ApiQueryParams,
  MemoryRoutes,
  MemorySchemas,
} from '@ratchet/http-edge';
import type { ServerResponse } from 'node:http';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { READ_ROLES, RequireAnyRole, WRITE_ROLES } from '../auth/roles.decorator';

/**
 * Durable memory, relayed to the memory service (`<prefix>.memory.<tenant>.<op>`) with the caller as
 * the principal: the tenant from the credential, the owner rules the memory service's own.
 */
@ApiTags('memory')
@Controller('v1/memory')
export class MemoryController {
  constructor(private readonly routes: MemoryRoutes) {}

  @Put('items/:namespace/:key')
  @RequireAnyRole(...WRITE_ROLES)
  @ApiOperation({
    summary: 'Create or replace a memory item',
    description:
      '201 when created, 200 when replaced. `expectedVersion` makes it conditional (409 when it does not match).',
  })
  @ApiPathParams(MemorySchemas.ItemParams, { namespace: 'URL-encoded, e.g. users%2Falice%2Fpreferences' })
  @ApiJsonBody('PutMemoryItemBody', MemorySchemas.PutItemBody)
  @ApiJsonResponse(200, 'Replaced', 'MemoryItemReply', MemorySchemas.ItemReply)
  @ApiJsonResponse(201, 'Created', 'MemoryItemReply', MemorySchemas.ItemReply)
  @ApiProblems({
    403: 'The item belongs to another principal',
    409: 'expectedVersion does not match',
    413: 'Too large',
  })
  put(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Body() rawBody: unknown,
    @Res({ passthrough: true }) res: ServerResponse,
  ) {
    return this.routes.put(principal, rawParams, rawBody, res);
  }

  @Get('items/:namespace/:key')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: 'Read a memory item' })
  @ApiPathParams(MemorySchemas.ItemParams, { namespace: 'URL-encoded, e.g. users%2Falice%2Fpreferences' })
  @ApiJsonResponse(200, 'The item', 'MemoryItemReply', MemorySchemas.ItemReply)
  @ApiProblems({ 404: 'No such item in your tenant' })
  get(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown) {
    return this.routes.get(principal, rawParams);
  }

  @Delete('items/:namespace/:key')
  @RequireAnyRole(...WRITE_ROLES)
  @ApiOperation({ summary: 'Delete a memory item' })
  @ApiPathParams(MemorySchemas.ItemParams, { namespace: 'URL-encoded, e.g. users%2Falice%2Fpreferences' })
  @ApiQueryParams(MemorySchemas.DeleteQuery, { expectedVersion: 'Delete only this version (409 otherwise)' })
  @ApiJsonResponse(200, 'Deleted', 'MemoryDeleteReply', MemorySchemas.DeleteReply)
  @ApiProblems({
    403: 'The item belongs to another principal',
    404: 'No such item in your tenant',
    409: 'expectedVersion does not match',
  })
  remove(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Query() rawQuery: unknown,
  ) {
    return this.routes.remove(principal, rawParams, rawQuery);
  }

  @Get('items')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: 'List memory items under a namespace prefix' })
  @ApiQueryParams(MemorySchemas.ListQuery, {
    prefix: '`users/alice` matches `users/alice` and `users/alice/x`',
    cursor: 'nextCursor of the previous page',
  })
  @ApiJsonResponse(200, 'A page of items', 'MemoryListReply', MemorySchemas.ListReply)
  list(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Query() rawQuery: unknown) {
    return this.routes.list(principal, rawQuery);
  }

  @Get('search')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: 'Full-text search over memory items' })
  @ApiQueryParams(MemorySchemas.SearchQuery, {
    q: 'Web-search syntax: words, "quoted phrases", -excluded, or',
    prefix: '`users/alice` matches `users/alice` and `users/alice/x`',
  })
  @ApiJsonResponse(200, 'Best matches first', 'MemorySearchReply', MemorySchemas.SearchReply)
  search(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Query() rawQuery: unknown) {
    return this.routes.search(principal, rawQuery);
  }
}
