import type { OutboxMessage } from '@ratchet/domain';
import { announceRevocationsSql, announcementOf } from './revocation-announcements';
import { isoColumn, type SqlExecutor } from './sql';

/** One entry of a tenant's JWT deny list (ADR 0035). */
export interface JwtRevocationRecord {
  id: string;
  tenantId: string;
  /** The token's `sub` claim (the principal is `jwt:<sub>`). */
  subject: string;
  /** Only the token with this `jti`; null: any. */
  jti: string | null;
  /** Only tokens issued (`iat`) before this time; null: whenever issued. */
  issuedBefore: string | null;
  reason: string;
  /** The principal that added it. */
  createdBy: string;
  createdAt: string;
}

export interface AddJwtRevocation {
  tenantId: string;
  subject: string;
  jti?: string | undefined;
  issuedBefore?: string | undefined;
  reason?: string | undefined;
  createdBy: string;
}

interface Row {
  id: string;
  tenant_id: string;
  subject: string;
  jti: string | null;
  issued_before: string | null;
  reason: string;
  created_by: string;
  created_at: string;
}

const COLUMNS = `id, tenant_id, subject, jti, ${isoColumn('issued_before')}, reason, created_by, ${isoColumn('created_at')}`;

/**
 * The gateway's JWT deny list (schema `gateway`, table `jwt_revocations`). Every read and delete is
 * bound to a tenant: another tenant's entry is not found.
 */
export class JwtRevocationsRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /**
   * Adds an entry and, in the same statement, its announcement to the orchestrators (PrincipalRevokedMessage:
   * the subject's runs stop; a whole-subject entry pauses its schedules too). `subjectPrefix` is the
   * deployment's NATS subject prefix. Returns the entry and the announcement, for the caller to publish
   * at once (the orchestrators' relay publishes it otherwise).
   */
  async addAnnounced(
    input: AddJwtRevocation,
    subjectPrefix: string,
  ): Promise<{ record: JwtRevocationRecord; announcement: OutboxMessage }> {
    const announce = announceRevocationsSql('r', {
      id: 'r.id',
      tenantId: 'r.tenant_id',
      principalId: "'jwt:' || r.subject",
      scope: "case when r.jti is null and r.issued_before is null then 'principal' else 'tokens' end",
      at: 'r.created_at',
      by: 'r.created_by',
      reason: 'r.reason',
    });
    const [row] = await this.sql.query<
      Row & { o_id: string; o_subject: string; o_headers: Record<string, string>; o_payload: unknown }
    >(
      `with r as (
         insert into ${this.sql.table('jwt_revocations')} (tenant_id, subject, jti, issued_before, reason, created_by)
         values (?, ?, ?, ?::timestamptz, ?, ?) returning *),
       o as (${announce})
       select x.*, o.id as o_id, o.subject as o_subject, o.headers as o_headers, o.payload as o_payload
         from (select ${COLUMNS} from r) x, o`,
      [
        input.tenantId,
        input.subject,
        input.jti ?? null,
        input.issuedBefore ?? null,
        input.reason ?? '',
        input.createdBy,
        subjectPrefix,
      ],
    );
    if (!row) throw new Error('jwt revocation insert returned no row');
    return {
      record: toRecord(row),
      announcement: announcementOf({
        id: row.o_id,
        subject: row.o_subject,
        headers: row.o_headers,
        payload: row.o_payload,
      }),
    };
  }

  /** The tenant's entries, newest first. */
  async list(tenantId: string): Promise<JwtRevocationRecord[]> {
    const rows = await this.sql.query<Row>(
      `select ${COLUMNS} from ${this.sql.table('jwt_revocations')} where tenant_id = ? order by created_at desc, id`,
      [tenantId],
    );
    return rows.map(toRecord);
  }

  /** The tenant's entries for one subject: what the auth guard and the principals check decide on. */
  async forSubject(tenantId: string, subject: string): Promise<JwtRevocationRecord[]> {
    const rows = await this.sql.query<Row>(
      `select ${COLUMNS} from ${this.sql.table('jwt_revocations')} where tenant_id = ? and subject = ?`,
      [tenantId, subject],
    );
    return rows.map(toRecord);
  }

  /** True when the tenant had this entry. */
  async remove(tenantId: string, id: string): Promise<boolean> {
    const n = await this.sql.run(`delete from ${this.sql.table('jwt_revocations')} where tenant_id = ? and id = ?`, [
      tenantId,
      id,
    ]);
    return n === 1;
  }
}

function toRecord(r: Row): JwtRevocationRecord {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    subject: r.subject,
    jti: r.jti,
    issuedBefore: r.issued_before,
    reason: r.reason,
    createdBy: r.created_by,
    createdAt: r.created_at,
  };
}
