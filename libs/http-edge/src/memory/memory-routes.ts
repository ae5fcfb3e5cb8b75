import { MemoryItem, MemoryKey, MemoryNamespace, MemoryNamespacePrefix, MemoryPutRequest } from '@ratchet/contracts';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { backendProblem } from '../backend-errors';
import type { Backends } from '../backends/backends';
import { principalOf, replyWith, type EdgePrincipal } from '../route-helpers';
import { parseRequest } from '../problem-details';

/** Path `/v1/memory/items/{namespace}/{key}`: the namespace is one URL-encoded segment (`users%2Falice`). */
export const ItemParams = z.object({ namespace: MemoryNamespace, key: MemoryKey.pipe(z.string().max(1024)) });

/** The body of a put: the memory contract's request without what the path and credential decide. */
export const PutItemBody = z
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
export const DeleteQuery = z.object({ expectedVersion: z.coerce.number().int().positive().optional() });
export const ListQuery = z.object({
  prefix: MemoryNamespacePrefix.default(''),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});
export const SearchQuery = z.object({
  q: z.string().min(1).max(1000),
  prefix: MemoryNamespacePrefix.default(''),
  limit: z.coerce.number().int().min(1).max(100).default(10),
});

export const ItemReply = z.object({ item: MemoryItem });
export const ListReply = z.object({ items: z.array(MemoryItem), nextCursor: z.string().optional() });
export const SearchReply = z.object({ hits: z.array(z.object({ item: MemoryItem, score: z.number() })) });
export const DeleteReply = z.object({ deleted: z.literal(true), version: z.number().int() });

/** The schemas the memory routes declare for OpenAPI, as one object for the controller's decorators. */
export const MemorySchemas = {
  ItemParams,
  PutItemBody,
  DeleteQuery,
  ListQuery,
  SearchQuery,
  ItemReply,
  ListReply,
  SearchReply,
  DeleteReply,
} as const;

/**
 * Durable memory (`/v1/memory`), relayed to the memory service (`<prefix>.memory.<tenant>.<op>`) with the
 * caller as the principal: the tenant from the credential, the owner rules the memory service's own.
 */
export class MemoryRoutes {
  constructor(private readonly backends: Pick<Backends, 'memory'>) {}

  /** 201 when created, 200 when replaced; `expectedVersion` makes it conditional. */
  async put(principal: EdgePrincipal, rawParams: unknown, rawBody: unknown, res: ServerResponse) {
    const { namespace, key } = parseRequest(ItemParams, rawParams, { in: 'path' });
    const body = parseRequest(PutItemBody, rawBody, { in: 'body' });
    const reply = await this.backends.memory.put(principal.tenantId, {
      principal: principalOf(principal),
      namespace,
      key,
      ...dropUndefined(body),
    });
    if (!reply.ok) throw backendProblem(reply.error, 'memory item');
    return replyWith(res, reply.item.version === 1 ? 201 : 200, { item: reply.item });
  }

  async get(principal: EdgePrincipal, rawParams: unknown) {
    const { namespace, key } = parseRequest(ItemParams, rawParams, { in: 'path' });
    const reply = await this.backends.memory.get(principal.tenantId, {
      principal: principalOf(principal),
      namespace,
      key,
    });
    if (!reply.ok) throw backendProblem(reply.error, 'memory item');
    return { item: reply.item };
  }

  async remove(principal: EdgePrincipal, rawParams: unknown, rawQuery: unknown) {
    const { namespace, key } = parseRequest(ItemParams, rawParams, { in: 'path' });
    const { expectedVersion } = parseRequest(DeleteQuery, rawQuery, { in: 'query' });
    const reply = await this.backends.memory.delete(principal.tenantId, {
      principal: principalOf(principal),
      namespace,
      key,
      ...(expectedVersion === undefined ? {} : { expectedVersion }),
    });
    if (!reply.ok) throw backendProblem(reply.error, 'memory item');
    return { deleted: true as const, version: reply.version };
  }

  async list(principal: EdgePrincipal, rawQuery: unknown) {
    const query = parseRequest(ListQuery, rawQuery, { in: 'query' });
    const reply = await this.backends.memory.list(principal.tenantId, {
      ...under(principal, query),
      ...(query.cursor ? { cursor: query.cursor } : {}),
    });
    if (!reply.ok) throw backendProblem(reply.error, 'memory item');
    return { items: reply.items, ...(reply.nextCursor ? { nextCursor: reply.nextCursor } : {}) };
  }

  async search(principal: EdgePrincipal, rawQuery: unknown) {
    const query = parseRequest(SearchQuery, rawQuery, { in: 'query' });
    const reply = await this.backends.memory.search(principal.tenantId, { ...under(principal, query), query: query.q });
    if (!reply.ok) throw backendProblem(reply.error, 'memory item');
    return { hits: reply.hits };
  }
}

/** What a listing or a search of memory is asked: as the caller, under a namespace prefix, at most `limit`. */
function under(principal: EdgePrincipal, query: { prefix: string; limit: number }) {
  return { principal: principalOf(principal), namespacePrefix: query.prefix, limit: query.limit };
}

function dropUndefined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
