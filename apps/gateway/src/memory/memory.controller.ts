import { Body, Controller, Delete, Get, Param, Put, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { MemoryItem, MemoryKey, MemoryNamespace, MemoryNamespacePrefix, MemoryPutRequest } from '@ratchet/contracts';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { READ_ROLES, RequireAnyRole, WRITE_ROLES } from '../auth/roles.decorator';
import { Backends } from '../backends/backends';
import { backendProblem } from '@ratchet/http-edge';
import { parseRequest } from '@ratchet/http-edge';
import { ApiJsonBody, ApiJsonResponse, ApiPathParams, ApiProblems, ApiQueryParams } from '@ratchet/http-edge';

/** Path `/v1/memory/items/{namespace}/{key}`: the namespace is one URL-encoded segment (`users%2Falice`). */
const ItemParams = z.object({ namespace: MemoryNamespace, key: MemoryKey.pipe(z.string().max(1024)) });

/** The body of a put: the memory contract's request without what the path and credential decide. */
const PutItemBody = z
  .strictObject({
    value: MemoryPutRequest.shape.value,
    text: MemoryPutRequest.shape.text,
    subject: MemoryPutRequest.shape.subject,
    provenance: MemoryPutRequest.shape.provenance,
    expectedVersion: MemoryPutRequest.shape.expectedVersion,
    ttlSeconds: MemoryPutRequest.shape.ttlSeconds,
    refreshOnRead: MemoryPutRequest.shape.refreshOnRead,
  })
  .describe('PutMemoryItemBody');
const DeleteQuery = z.object({ expectedVersion: z.coerce.number().int().positive().optional() });
const ListQuery = z.object({
  prefix: MemoryNamespacePrefix.default(''),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});
const SearchQuery = z.object({
  q: z.string().min(1).max(1000),
  prefix: MemoryNamespacePrefix.default(''),
  limit: z.coerce.number().int().min(1).max(100).default(10),
});

const ItemReply = z.object({ item: MemoryItem });
const ListReply = z.object({ items: z.array(MemoryItem), nextCursor: z.string().optional() });
const SearchReply = z.object({ hits: z.array(z.object({ item: MemoryItem, score: z.number() })) });
const DeleteReply = z.object({ deleted: z.literal(true), version: z.number().int() });

/**
 * Durable memory, relayed to the memory service (`<prefix>.memory.<tenant>.<op>`) with the caller as
 * the principal: the tenant from the credential, the owner rules the memory service's own.
 */
@ApiTags('memory')
@Controller('v1/memory')
export class MemoryController {
  constructor(private readonly backends: Backends) {}

  @Put('items/:namespace/:key')
  @RequireAnyRole(...WRITE_ROLES)
  @ApiOperation({
    summary: 'Create or replace a memory item',
    description:
      '201 when created, 200 when replaced. `expectedVersion` makes it conditional (409 when it does not match).',
  })
  @ApiPathParams(ItemParams, { namespace: 'URL-encoded, e.g. users%2Falice%2Fpreferences' })
  @ApiJsonBody('PutMemoryItemBody', PutItemBody)
  @ApiJsonResponse(200, 'Replaced', 'MemoryItemReply', ItemReply)
  @ApiJsonResponse(201, 'Created', 'MemoryItemReply', ItemReply)
  @ApiProblems({
    403: 'The item belongs to another principal',
    409: 'expectedVersion does not match',
    413: 'Too large',
  })
  async put(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Body() rawBody: unknown,
    @Res({ passthrough: true }) res: ServerResponse,
  ) {
    const { namespace, key } = parseRequest(ItemParams, rawParams, { in: 'path' });
    const body = parseRequest(PutItemBody, rawBody, { in: 'body' });
    const reply = await this.backends.memory.put(principal.tenantId, {
      principal: memoryPrincipal(principal),
      namespace,
      key,
      ...dropUndefined(body),
    });
    if (!reply.ok) throw backendProblem(reply.error, 'memory item');
    res.statusCode = reply.item.version === 1 ? 201 : 200;
    return { item: reply.item };
  }

  @Get('items/:namespace/:key')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: 'Read a memory item' })
  @ApiPathParams(ItemParams, { namespace: 'URL-encoded, e.g. users%2Falice%2Fpreferences' })
  @ApiJsonResponse(200, 'The item', 'MemoryItemReply', ItemReply)
  @ApiProblems({ 404: 'No such item in your tenant' })
  async get(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown) {
    const { namespace, key } = parseRequest(ItemParams, rawParams, { in: 'path' });
    const reply = await this.backends.memory.get(principal.tenantId, {
      principal: memoryPrincipal(principal),
      namespace,
      key,
    });
    if (!reply.ok) throw backendProblem(reply.error, 'memory item');
    return { item: reply.item };
  }

  @Delete('items/:namespace/:key')
  @RequireAnyRole(...WRITE_ROLES)
  @ApiOperation({ summary: 'Delete a memory item' })
  @ApiPathParams(ItemParams, { namespace: 'URL-encoded, e.g. users%2Falice%2Fpreferences' })
  @ApiQueryParams(DeleteQuery, { expectedVersion: 'Delete only this version (409 otherwise)' })
  @ApiJsonResponse(200, 'Deleted', 'MemoryDeleteReply', DeleteReply)
  @ApiProblems({
    403: 'The item belongs to another principal',
    404: 'No such item in your tenant',
    409: 'expectedVersion does not match',
  })
  async remove(
    @CurrentPrincipal() principal: AuthenticatedPrincipal,
    @Param() rawParams: unknown,
    @Query() rawQuery: unknown,
  ) {
    const { namespace, key } = parseRequest(ItemParams, rawParams, { in: 'path' });
    const { expectedVersion } = parseRequest(DeleteQuery, rawQuery, { in: 'query' });
    const reply = await this.backends.memory.delete(principal.tenantId, {
      principal: memoryPrincipal(principal),
      namespace,
      key,
      ...(expectedVersion === undefined ? {} : { expectedVersion }),
    });
    if (!reply.ok) throw backendProblem(reply.error, 'memory item');
    return { deleted: true as const, version: reply.version };
  }

  @Get('items')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: 'List memory items under a namespace prefix' })
  @ApiQueryParams(ListQuery, {
    prefix: '`users/alice` matches `users/alice` and `users/alice/x`',
    cursor: 'nextCursor of the previous page',
  })
  @ApiJsonResponse(200, 'A page of items', 'MemoryListReply', ListReply)
  async list(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Query() rawQuery: unknown) {
    const query = parseRequest(ListQuery, rawQuery, { in: 'query' });
    const reply = await this.backends.memory.list(principal.tenantId, {
      principal: memoryPrincipal(principal),
      namespacePrefix: query.prefix,
      limit: query.limit,
      ...(query.cursor ? { cursor: query.cursor } : {}),
    });
    if (!reply.ok) throw backendProblem(reply.error, 'memory item');
    return { items: reply.items, ...(reply.nextCursor ? { nextCursor: reply.nextCursor } : {}) };
  }

  @Get('search')
  @RequireAnyRole(...READ_ROLES)
  @ApiOperation({ summary: 'Full-text search over memory items' })
  @ApiQueryParams(SearchQuery, {
    q: 'Web-search syntax: words, "quoted phrases", -excluded, or',
    prefix: '`users/alice` matches `users/alice` and `users/alice/x`',
  })
  @ApiJsonResponse(200, 'Best matches first', 'MemorySearchReply', SearchReply)
  async search(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Query() rawQuery: unknown) {
    const query = parseRequest(SearchQuery, rawQuery, { in: 'query' });
    const reply = await this.backends.memory.search(principal.tenantId, {
      principal: memoryPrincipal(principal),
      query: query.q,
      namespacePrefix: query.prefix,
      limit: query.limit,
    });
    if (!reply.ok) throw backendProblem(reply.error, 'memory item');
    return { hits: reply.hits };
  }
}

function memoryPrincipal(principal: AuthenticatedPrincipal) {
  return { id: principal.principalId, roles: [...principal.roles] };
}

function dropUndefined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
