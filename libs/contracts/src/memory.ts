import { z } from 'zod';
import { IsoTime, Principal, RunId, SubjectToken, ThreadId } from './ids';
import { Json } from './messages';

/*
 * Durable memory (architecture §1, §9): what should remain known across threads. Callers talk to the
 * memory service by NATS request/reply on `<prefix>.memory.<tenant>.<op>`. The tenant is the subject
 * token (bound by NATS permissions), never a body field; request bodies are strict, so a stray
 * `tenantId` is refused rather than silently ignored.
 */

export const MEMORY_OPS = ['put', 'get', 'list', 'search', 'delete', 'forget-subject'] as const;
export const MemoryOp = z.enum(MEMORY_OPS);
export type MemoryOp = z.infer<typeof MemoryOp>;

export const MEMORY_NAMESPACE_MAX_DEPTH = 8;
const SEGMENT = '[A-Za-z0-9_.-]+';
const NAMESPACE_RE = new RegExp(`^${SEGMENT}(/${SEGMENT}){0,${MEMORY_NAMESPACE_MAX_DEPTH - 1}}$`);
const NAMESPACE_PREFIX_RE = new RegExp(`^(${SEGMENT}(/${SEGMENT}){0,${MEMORY_NAMESPACE_MAX_DEPTH - 1}}/?)?$`);

export const MemoryNamespace = z
  .string()
  .max(1024)
  .regex(NAMESPACE_RE, {
    error: `must be 1-${MEMORY_NAMESPACE_MAX_DEPTH} "/"-separated segments of letters, digits, "_", "." and "-"`,
  })
  .describe('Path such as users/alice/preferences');

/** A namespace, a namespace with a trailing "/", or "" (everything); matches whole segments only. */
export const MemoryNamespacePrefix = z
  .string()
  .max(1025)
  .regex(NAMESPACE_PREFIX_RE, { error: 'must be "" or a namespace, optionally ending in "/"' })
  .describe('Namespace prefix: `users/alice` matches `users/alice` and `users/alice/x`, not `users/alicex`');

/** Postgres text cannot hold U+0000: refused on the wire rather than failing in the database. */
const storable = (s: z.ZodString) => s.refine((v) => !v.includes('\u0000'), { error: 'must not contain U+0000' });

/** The configured key limit (default 256 bytes) is a rule of the service (`too_large`), not of the wire. */
export const MemoryKey = storable(z.string().min(1)).describe('Key within the namespace');

export const PrincipalId = storable(z.string().min(1).max(256)).describe('A principal id');

/** The acting principal, as the calling service verified it; its id becomes an item's owner. */
export const MemoryPrincipal = Principal.extend({ id: PrincipalId });

export const MemoryProvenance = z
  .object({
    threadId: ThreadId.optional(),
    runId: RunId.optional(),
    eventId: z.string().min(1).max(256).optional(),
  })
  .describe('Where the item came from; never used for authorisation');
export type MemoryProvenance = z.infer<typeof MemoryProvenance>;

export const MemoryItem = z
  .object({
    namespace: MemoryNamespace,
    key: MemoryKey,
    value: Json,
    text: z.string().describe('Searchable text; a flattening of the value unless the writer gave one'),
    owner: PrincipalId.describe('The principal that created the item; only it (or an admin) may change it'),
    subject: PrincipalId.optional().describe('The principal the item is about (forget-subject erases it)'),
    provenance: MemoryProvenance,
    createdAt: IsoTime,
    updatedAt: IsoTime,
    version: z.number().int().positive().describe('1 on create, +1 on every put'),
    expiresAt: IsoTime.optional().describe('Absent = kept until deleted (unless a retention rule applies)'),
    refreshOnRead: z.boolean(),
    ttlSeconds: z.number().int().positive().optional(),
  })
  .describe('MemoryItem');
export type MemoryItem = z.infer<typeof MemoryItem>;

/** Ten years: a bound that keeps `now + ttl` a valid timestamp. */
const MAX_TTL_SECONDS = 10 * 365 * 24 * 3600;

export const MemoryPutRequest = z
  .strictObject({
    principal: MemoryPrincipal,
    namespace: MemoryNamespace,
    key: MemoryKey,
    value: Json,
    text: storable(z.string()).optional(),
    subject: PrincipalId.optional(),
    provenance: MemoryProvenance.default({}),
    expectedVersion: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('0 = must not exist yet; n = must be at version n; absent = last writer wins'),
    ttlSeconds: z.number().int().positive().max(MAX_TTL_SECONDS).optional(),
    refreshOnRead: z.boolean().default(false).describe('Each get moves expiresAt to now + ttlSeconds'),
  })
  .refine((r) => !r.refreshOnRead || r.ttlSeconds !== undefined, {
    error: 'refreshOnRead needs ttlSeconds',
    path: ['ttlSeconds'],
  })
  .describe('MemoryPutRequest');
export type MemoryPutRequest = z.infer<typeof MemoryPutRequest>;

export const MemoryGetRequest = z
  .strictObject({ principal: MemoryPrincipal, namespace: MemoryNamespace, key: MemoryKey })
  .describe('MemoryGetRequest');
export type MemoryGetRequest = z.infer<typeof MemoryGetRequest>;

export const MemoryListRequest = z
  .strictObject({
    principal: MemoryPrincipal,
    namespacePrefix: MemoryNamespacePrefix.default(''),
    limit: z.number().int().min(1).max(200).default(50),
    cursor: z.string().min(1).max(2048).optional().describe('nextCursor of the previous page'),
  })
  .describe('MemoryListRequest');
export type MemoryListRequest = z.infer<typeof MemoryListRequest>;

export const MemorySearchRequest = z
  .strictObject({
    principal: MemoryPrincipal,
    query: storable(z.string().min(1).max(1000)).describe('Web-search syntax: words, "quoted phrases", -excluded, or'),
    namespacePrefix: MemoryNamespacePrefix.default(''),
    limit: z.number().int().min(1).max(100).default(10),
  })
  .describe('MemorySearchRequest');
export type MemorySearchRequest = z.infer<typeof MemorySearchRequest>;

export const MemoryDeleteRequest = z
  .strictObject({
    principal: MemoryPrincipal,
    namespace: MemoryNamespace,
    key: MemoryKey,
    expectedVersion: z.number().int().positive().optional(),
  })
  .describe('MemoryDeleteRequest');
export type MemoryDeleteRequest = z.infer<typeof MemoryDeleteRequest>;

export const MemoryForgetSubjectRequest = z
  .strictObject({
    principal: MemoryPrincipal,
    subject: PrincipalId.describe('Erase every item this principal owns or is about'),
  })
  .describe('MemoryForgetSubjectRequest');
export type MemoryForgetSubjectRequest = z.infer<typeof MemoryForgetSubjectRequest>;

/**
 * `not_found` also answers for other tenants' items (indistinguishable by design); `unavailable` is the
 * only code worth retrying as is; `version_conflict` means re-read and decide again.
 */
export const MEMORY_ERROR_CODES = [
  'not_found',
  'forbidden',
  'version_conflict',
  'too_large',
  'invalid',
  'unavailable',
] as const;
export const MemoryErrorCode = z.enum(MEMORY_ERROR_CODES);
export type MemoryErrorCode = z.infer<typeof MemoryErrorCode>;

export const MemoryError = z.object({
  code: MemoryErrorCode,
  message: z.string(),
  field: z.string().optional().describe('The request field at fault (invalid, too_large)'),
  limit: z.number().int().optional().describe('The limit that was exceeded (too_large)'),
});
export type MemoryError = z.infer<typeof MemoryError>;

export const MemoryFailureReply = z.object({ ok: z.literal(false), error: MemoryError });
export type MemoryFailureReply = z.infer<typeof MemoryFailureReply>;

function reply<S extends z.ZodRawShape>(name: string, shape: S) {
  return z.discriminatedUnion('ok', [z.object({ ok: z.literal(true), ...shape }), MemoryFailureReply]).describe(name);
}

export const MemoryPutReply = reply('MemoryPutReply', { item: MemoryItem });
export const MemoryGetReply = reply('MemoryGetReply', { item: MemoryItem });
export const MemoryListReply = reply('MemoryListReply', {
  items: z.array(MemoryItem),
  nextCursor: z.string().optional().describe('Absent on the last page'),
});
export const MemorySearchReply = reply('MemorySearchReply', {
  hits: z.array(z.object({ item: MemoryItem, score: z.number() })),
});
export const MemoryDeleteReply = reply('MemoryDeleteReply', {
  version: z.number().int().positive().describe('The version that was deleted'),
});
export const MemoryForgetSubjectReply = reply('MemoryForgetSubjectReply', {
  erased: z.number().int().nonnegative().describe('Items removed'),
});

/** Request and reply schema of every operation, by the op token of its subject. */
export const MEMORY_CONTRACTS = {
  put: { request: MemoryPutRequest, reply: MemoryPutReply },
  get: { request: MemoryGetRequest, reply: MemoryGetReply },
  list: { request: MemoryListRequest, reply: MemoryListReply },
  search: { request: MemorySearchRequest, reply: MemorySearchReply },
  delete: { request: MemoryDeleteRequest, reply: MemoryDeleteReply },
  'forget-subject': { request: MemoryForgetSubjectRequest, reply: MemoryForgetSubjectReply },
} as const satisfies Record<MemoryOp, { request: z.ZodType; reply: z.ZodType }>;

export type MemoryRequest<O extends MemoryOp> = z.output<(typeof MEMORY_CONTRACTS)[O]['request']>;
export type MemoryRequestInput<O extends MemoryOp> = z.input<(typeof MEMORY_CONTRACTS)[O]['request']>;
export type MemoryReply<O extends MemoryOp> = z.output<(typeof MEMORY_CONTRACTS)[O]['reply']>;

/** `<prefix>.memory.<tenant>.<op>` */
export function memorySubject(prefix: string, tenant: string, op: MemoryOp): string {
  if (!SubjectToken.safeParse(tenant).success)
    throw new Error(`invalid tenant for a subject: ${JSON.stringify(tenant)}`);
  return `${prefix}.memory.${tenant}.${op}`;
}

/** What the memory service subscribes to (one queue group across instances). */
export function memorySubjectPattern(prefix: string): string {
  return `${prefix}.memory.*.*`;
}

/** Tenant and op of a memory subject; undefined when either token is not valid. */
export function parseMemorySubject(prefix: string, subject: string): { tenant: string; op: MemoryOp } | undefined {
  const head = `${prefix}.memory.`;
  if (!subject.startsWith(head)) return undefined;
  const [tenant, op, ...rest] = subject.slice(head.length).split('.');
  if (rest.length > 0 || !SubjectToken.safeParse(tenant).success) return undefined;
  const parsedOp = MemoryOp.safeParse(op);
  return parsedOp.success && tenant ? { tenant, op: parsedOp.data } : undefined;
}
