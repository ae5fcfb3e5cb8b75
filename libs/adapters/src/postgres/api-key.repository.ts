import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { OutboxMessage } from '@ratchet/domain';
import { announceRevocationsSql, announcementOf } from './revocation-announcements';
import { isoColumn, type SqlExecutor } from './sql';

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  name: string;
  roles: string[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

export interface CreateApiKey {
  tenantId: string;
  name: string;
  roles: string[];
  expiresAt?: Date | null;
  /** Only for seeding known keys (dev, tests); otherwise a random secret is generated. */
  secret?: string;
}

/** SHA-256 (hex) of a presented key: the only form in which a key is stored or looked up. */
export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

interface ApiKeyDbRow {
  id: string;
  tenant_id: string;
  name: string;
  roles: string[];
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

const COLUMNS = `id, tenant_id, name, roles, ${isoColumn('created_at')}, ${isoColumn('expires_at')}, ${isoColumn(
  'revoked_at',
)}`;

/** The gateway's API keys (schema `gateway`). */
export class ApiKeyRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /** Returns the secret once; it is not recoverable afterwards. */
  async create(input: CreateApiKey): Promise<{ key: ApiKeyRecord; secret: string }> {
    const secret = input.secret ?? `rk_${randomBytes(32).toString('base64url')}`;
    const rows = await this.sql.query<ApiKeyDbRow>(
      `insert into ${this.sql.table('api_keys')} (id, tenant_id, name, key_hash, roles, expires_at)
       values (?, ?, ?, ?, ${input.roles.length > 0 ? 'array[?]' : 'array[]'}::text[], ?::timestamptz)
       returning ${COLUMNS}`,
      [
        randomUUID(),
        input.tenantId,
        input.name,
        hashApiKey(secret),
        ...(input.roles.length > 0 ? [input.roles] : []),
        input.expiresAt ? input.expiresAt.toISOString() : null,
      ],
    );
    const row = rows[0];
    if (!row) throw new Error('api key insert returned no row');
    return { key: toRecord(row), secret };
  }

  /** The key with this hash, if it is neither revoked nor expired. */
  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.sql.query<ApiKeyDbRow>(
      `select ${COLUMNS} from ${this.sql.table('api_keys')}
       where key_hash = ? and revoked_at is null and (expires_at is null or expires_at > now())`,
      [keyHash],
    );
    return rows[0] && toRecord(rows[0]);
  }

  /** True when the key existed and was not already revoked. */
  async revoke(id: string): Promise<boolean> {
    const n = await this.sql.run(
      `update ${this.sql.table('api_keys')} set revoked_at = now() where id = ? and revoked_at is null`,
      [id],
    );
    return n === 1;
  }

  /**
   * Revokes a key and, in the same statement, announces it to the orchestrators (PrincipalRevokedMessage:
   * the key's queued and running runs stop, its schedules pause). Undefined when the key does not exist
   * or was revoked already; else the key's tenant and the announcement, for the caller to publish at once.
   */
  async revokeAnnounced(
    id: string,
    by: { by: string; reason: string; subjectPrefix: string },
  ): Promise<{ tenantId: string; announcement: OutboxMessage } | undefined> {
    const announce = announceRevocationsSql('k', {
      id: "'key:' || k.id",
      tenantId: 'k.tenant_id',
      principalId: "'key:' || k.id",
      scope: "'principal'",
      at: 'k.revoked_at',
      by: '?::text',
      reason: '?::text',
    });
    const [row] = await this.sql.query<{
      tenant_id: string;
      id: string;
      subject: string;
      headers: Record<string, string>;
      payload: unknown;
    }>(
      `with k as (update ${this.sql.table('api_keys')} set revoked_at = now() where id = ? and revoked_at is null
         returning id, tenant_id, revoked_at), o as (${announce})
       select k.tenant_id, o.id, o.subject, o.headers, o.payload from k, o`,
      [id, by.subjectPrefix, by.by, by.reason],
    );
    return row && { tenantId: row.tenant_id, announcement: announcementOf(row) };
  }

  /** Every key of the tenant, revoked and expired included, newest first. */
  async listByTenant(tenantId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.sql.query<ApiKeyDbRow>(
      `select ${COLUMNS} from ${this.sql.table('api_keys')} where tenant_id = ? order by created_at desc, id`,
      [tenantId],
    );
    return rows.map(toRecord);
  }
}

function toRecord(r: ApiKeyDbRow): ApiKeyRecord {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    name: r.name,
    roles: r.roles,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
  };
}
