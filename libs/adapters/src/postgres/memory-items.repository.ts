import { createHash } from 'node:crypto';
import type { Json, MemoryItem, MemoryProvenance } from '@ratchet/contracts';
import type { ReadScope, WriteGuard } from '@ratchet/domain';
import { isoColumn, type SqlExecutor } from './sql';

interface ItemDbRow {
  namespace: string;
  key: string;
  value: Json;
  text: string;
  owner: string;
  subject: string | null;
  provenance: MemoryProvenance;
  version: number;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  ttl_seconds: number | null;
  refresh_on_read: boolean;
}

const COLUMNS = `namespace, key, value, text, owner, subject, provenance, version,
  ${isoColumn('created_at')}, ${isoColumn('updated_at')}, ${isoColumn('expires_at')}, ttl_seconds, refresh_on_read`;

/** Where a list page ends; the next page starts after it. */
export interface ListPosition {
  namespace: string;
  key: string;
}

export class InvalidCursorError extends Error {
  readonly code = 'memory.invalid_cursor';
}

/** Opaque to callers; it names only a position inside the caller's own tenant, so it grants nothing. */
export function encodeListCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.namespace, position.key]), 'utf8').toString('base64url');
}

export function decodeListCursor(cursor: string): ListPosition {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((p) => typeof p === 'string'))
      return { namespace: parsed[0] as string, key: parsed[1] as string };
  } catch {
    // falls through to the error below
  }
  throw new InvalidCursorError('cursor is not one this service issued');
}

/**
 * What the erasure audit keeps of a subject: a SHA-256 over tenant and subject id, enough to answer
 * "was this person's memory erased, and when?" for someone who already knows the id, and nothing more.
 */
export function erasureSubjectHash(tenantId: string, subject: string): string {
  return createHash('sha256').update(`${tenantId}\n${subject}`, 'utf8').digest('hex');
}

/** `users/alice/` → `users/alice`; "" stays "" (everything). */
function trimPrefix(prefix: string): string {
  return prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
}

/** Whole-segment namespace prefix filter (same rule as the domain's `namespaceWithin`). */
function prefixFilter(prefix: string): { sql: string; params: string[] } {
  const p = trimPrefix(prefix);
  return p === ''
    ? { sql: 'true', params: [] }
    : { sql: '(namespace = ? or starts_with(namespace, ?))', params: [p, `${p}/`] };
}

/** What the principal may read (the domain's `readScope`), as a condition on the query. */
function scopeFilter(scope: ReadScope | undefined): { sql: string; params: string[] } {
  if (!scope || scope.kind === 'all') return { sql: 'true', params: [] };
  const trees = scope.trees.map((t) => prefixFilter(t));
  // The tree names are the domain's constants (segments: letters only), never caller input.
  const treeList = scope.classified.map((t) => `'${t.replace(/[^a-z]/g, '')}'`).join(', ');
  const unclassified = `(split_part(namespace, '/', 1) not in (${treeList}) and (owner = ? or subject = ?))`;
  return {
    sql: `(${[...trees.map((t) => t.sql), unclassified].join(' or ')})`,
    params: [...trees.flatMap((t) => t.params), scope.unclassifiedOwnedBy, scope.unclassifiedOwnedBy],
  };
}

const LIVE = '(expires_at is null or expires_at > ?::timestamptz)';

/**
 * The memory service's items (schema `memory`). Every statement is scoped by tenant; expired rows are
 * filtered out of every read (`now` comes from the caller, the same clock the rules used) and removed
 * by `sweepExpired`. Writes are guarded so that concurrent writers cannot both win.
 */
export class MemoryItemsRepository {
  constructor(private readonly sql: SqlExecutor) {}

  private get items(): string {
    return this.sql.table('items');
  }

  /** The stored row, expired or not: the rules decide what an expired row means. */
  async find(tenantId: string, namespace: string, key: string): Promise<MemoryItem | undefined> {
    const rows = await this.sql.query<ItemDbRow>(
      `select ${COLUMNS} from ${this.items} where tenant_id = ? and namespace = ? and key = ?`,
      [tenantId, namespace, key],
    );
    return rows[0] && toItem(rows[0]);
  }

  /** Writes a decided item under its guard; false when another writer got there first. */
  async write(tenantId: string, item: MemoryItem, guard: WriteGuard): Promise<boolean> {
    const data = [
      JSON.stringify(item.value),
      item.text,
      item.owner,
      item.subject ?? null,
      JSON.stringify(item.provenance),
      item.version,
      item.createdAt,
      item.updatedAt,
      item.expiresAt ?? null,
      item.ttlSeconds ?? null,
      item.refreshOnRead,
    ];
    if (guard.mode === 'insert') {
      return (
        (await this.sql.run(
          `insert into ${this.items} (tenant_id, namespace, key, value, text, owner, subject, provenance, version,
             created_at, updated_at, expires_at, ttl_seconds, refresh_on_read)
           values (?, ?, ?, ?::jsonb, ?, ?, ?, ?::jsonb, ?, ?::timestamptz, ?::timestamptz, ?::timestamptz, ?, ?)
           on conflict (tenant_id, namespace, key) do nothing`,
          [tenantId, item.namespace, item.key, ...data],
        )) === 1
      );
    }
    // Replacing an expired row also requires it to be expired still: two writers that both found it
    // expired would otherwise both "create" version 1.
    const stillExpired =
      guard.mode === 'replace-expired' ? ' and expires_at is not null and expires_at <= ?::timestamptz' : '';
    return (
      (await this.sql.run(
        `update ${this.items} set value = ?::jsonb, text = ?, owner = ?, subject = ?, provenance = ?::jsonb,
           version = ?, created_at = ?::timestamptz, updated_at = ?::timestamptz, expires_at = ?::timestamptz,
           ttl_seconds = ?, refresh_on_read = ?
         where tenant_id = ? and namespace = ? and key = ? and version = ?${stillExpired}`,
        [
          ...data,
          tenantId,
          item.namespace,
          item.key,
          guard.whereVersion,
          ...(guard.mode === 'replace-expired' ? [item.updatedAt] : []),
        ],
      )) === 1
    );
  }

  /** Moves a read item's expiry later (never earlier); not a new version, since the content is unchanged. */
  async extendExpiry(tenantId: string, item: MemoryItem): Promise<void> {
    if (item.expiresAt === undefined) return;
    await this.sql.run(
      `update ${this.items} set expires_at = ?::timestamptz
       where tenant_id = ? and namespace = ? and key = ? and version = ? and expires_at < ?::timestamptz`,
      [item.expiresAt, tenantId, item.namespace, item.key, item.version, item.expiresAt],
    );
  }

  async delete(tenantId: string, namespace: string, key: string, whereVersion: number): Promise<boolean> {
    return (
      (await this.sql.run(
        `delete from ${this.items} where tenant_id = ? and namespace = ? and key = ? and version = ?`,
        [tenantId, namespace, key, whereVersion],
      )) === 1
    );
  }

  /** Live items under a namespace prefix in (namespace, key) byte order, `limit` at a time. */
  async list(
    tenantId: string,
    namespacePrefix: string,
    limit: number,
    now: string,
    after?: ListPosition,
    scope?: ReadScope,
  ): Promise<{ items: MemoryItem[]; next?: ListPosition }> {
    const filter = prefixFilter(namespacePrefix);
    const readable = scopeFilter(scope);
    const rows = await this.sql.query<ItemDbRow>(
      `select ${COLUMNS} from ${this.items}
       where tenant_id = ? and ${filter.sql} and ${readable.sql} and ${LIVE}${after ? ' and (namespace, key) > (?, ?)' : ''}
       order by namespace, key limit ?`,
      [tenantId, ...filter.params, ...readable.params, now, ...(after ? [after.namespace, after.key] : []), limit + 1],
    );
    const items = rows.slice(0, limit).map(toItem);
    const last = items[items.length - 1];
    return rows.length > limit && last ? { items, next: { namespace: last.namespace, key: last.key } } : { items };
  }

  /** Postgres full-text search (`simple` dictionary, web-search syntax), best matches first. */
  async search(
    tenantId: string,
    query: string,
    namespacePrefix: string,
    limit: number,
    now: string,
    scope?: ReadScope,
  ): Promise<{ item: MemoryItem; score: number }[]> {
    const filter = prefixFilter(namespacePrefix);
    const readable = scopeFilter(scope);
    const rows = await this.sql.query<ItemDbRow & { score: number }>(
      `select ${COLUMNS}, ts_rank(search, q) as score
       from ${this.items}, websearch_to_tsquery('simple', ?) as q
       where tenant_id = ? and search @@ q and ${filter.sql} and ${readable.sql} and ${LIVE}
       order by score desc, namespace, key limit ?`,
      [query, tenantId, ...filter.params, ...readable.params, now, limit],
    );
    return rows.map((r) => ({ item: toItem(r), score: Number(r.score) }));
  }

  /**
   * Erases every item the subject owns or is about, and records that it happened without recording
   * who. Run it in a transaction so the audit row and the erasure commit together.
   */
  async forgetSubject(tenantId: string, subject: string): Promise<number> {
    const erased = await this.sql.run(`delete from ${this.items} where tenant_id = ? and (owner = ? or subject = ?)`, [
      tenantId,
      subject,
      subject,
    ]);
    await this.sql.run(
      `insert into ${this.sql.table('erasures')} (tenant_id, subject_hash, erased_count) values (?, ?, ?)`,
      [tenantId, erasureSubjectHash(tenantId, subject), erased],
    );
    return erased;
  }

  /** Deletes up to `batch` expired items (oldest expiry first); returns how many. */
  async sweepExpired(now: string, batch: number): Promise<number> {
    return this.sql.run(
      `delete from ${this.items} where (tenant_id, namespace, key) in (
         select tenant_id, namespace, key from ${this.items}
         where expires_at is not null and expires_at <= ?::timestamptz
         order by expires_at limit ? for update skip locked)`,
      [now, batch],
    );
  }
}

function toItem(r: ItemDbRow): MemoryItem {
  return {
    namespace: r.namespace,
    key: r.key,
    value: r.value,
    text: r.text,
    owner: r.owner,
    ...(r.subject === null ? {} : { subject: r.subject }),
    provenance: r.provenance,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    version: r.version,
    ...(r.expires_at === null ? {} : { expiresAt: r.expires_at }),
    refreshOnRead: r.refresh_on_read,
    ...(r.ttl_seconds === null ? {} : { ttlSeconds: r.ttl_seconds }),
  };
}
