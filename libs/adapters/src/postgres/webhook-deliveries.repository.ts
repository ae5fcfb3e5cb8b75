import type { AfterAttempt } from '@ratchet/domain';
import { isoColumn, type SqlExecutor } from './sql';

export interface WebhookDelivery {
  tenantId: string;
  deliveryId: string;
  url: string;
  body: Record<string, unknown>;
  status: 'pending' | 'delivered' | 'dead';
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  lastStatus: number | null;
  createdAt: string;
  deliveredAt: string | null;
}

interface Row {
  tenant_id: string;
  delivery_id: string;
  url: string;
  body: Record<string, unknown>;
  status: WebhookDelivery['status'];
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  last_status: number | null;
  created_at: string;
  delivered_at: string | null;
}

const COLUMNS = `tenant_id, delivery_id, url, body, status, attempts, ${isoColumn('next_attempt_at')}, last_error,
  last_status, ${isoColumn('created_at')}, ${isoColumn('delivered_at')}`;

const fromRow = (r: Row): WebhookDelivery => ({
  tenantId: r.tenant_id,
  deliveryId: r.delivery_id,
  url: r.url,
  body: r.body,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastError: r.last_error,
  lastStatus: r.last_status,
  createdAt: r.created_at,
  deliveredAt: r.delivered_at,
});

/** Webhook deliveries and tenants' signing secrets, in the orchestrator's schema. */
export class WebhookDeliveriesRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /** Records a delivery to make; false when it is recorded already (a redelivered command). */
  async record(d: { tenantId: string; deliveryId: string; url: string; body: unknown }, now: string): Promise<boolean> {
    const n = await this.sql.run(
      `insert into ${this.sql.table('webhook_deliveries')} (tenant_id, delivery_id, url, body, next_attempt_at, created_at, updated_at)
       values (?, ?, ?, ?::jsonb, ?, ?, ?) on conflict do nothing`,
      [d.tenantId, d.deliveryId, d.url, JSON.stringify(d.body), now, now, now],
    );
    return n === 1;
  }

  /**
   * Claims due deliveries for one attempt each (call inside a transaction, then commit): the attempt is
   * counted and the row is not due again until `leaseMs` from now, so a sender that dies mid-attempt
   * leaves it to be retried, and two senders never attempt one delivery at once.
   */
  async claimDue(now: string, leaseMs: number, limit: number): Promise<WebhookDelivery[]> {
    const rows = await this.sql.query<Row>(
      `update ${this.sql.table('webhook_deliveries')} d
          set attempts = d.attempts + 1, next_attempt_at = ?::timestamptz + ?::float8 * interval '1 millisecond', updated_at = ?
        where (d.tenant_id, d.delivery_id) in (
          select tenant_id, delivery_id from ${this.sql.table('webhook_deliveries')}
           where status = 'pending' and next_attempt_at <= ? order by next_attempt_at limit ? for update skip locked)
        returning ${COLUMNS}`,
      [now, leaseMs, now, now, limit],
    );
    return rows.map(fromRow);
  }

  /** Records how the attempt numbered `attempt` went (ignored if another attempt has been claimed since). */
  async settle(d: WebhookDelivery, next: AfterAttempt, httpStatus: number | undefined, now: string): Promise<void> {
    const status = next.status;
    await this.sql.run(
      `update ${this.sql.table('webhook_deliveries')}
          set status = ?, next_attempt_at = coalesce(?::timestamptz, next_attempt_at), last_error = ?, last_status = ?,
              delivered_at = case when ? = 'delivered' then ?::timestamptz else delivered_at end, updated_at = ?
        where tenant_id = ? and delivery_id = ? and attempts = ? and status = 'pending'`,
      [
        status,
        next.status === 'pending' ? next.nextAttemptAt : null,
        next.status === 'delivered' ? null : next.error,
        httpStatus ?? null,
        status,
        now,
        now,
        d.tenantId,
        d.deliveryId,
        d.attempts,
      ],
    );
  }

  async list(
    tenantId: string,
    filter: { status?: WebhookDelivery['status'] | undefined; limit: number },
  ): Promise<WebhookDelivery[]> {
    const rows = await this.sql.query<Row>(
      `select ${COLUMNS} from ${this.sql.table('webhook_deliveries')}
        where tenant_id = ? ${filter.status ? 'and status = ?' : ''} order by created_at desc limit ?`,
      filter.status ? [tenantId, filter.status, filter.limit] : [tenantId, filter.limit],
    );
    return rows.map(fromRow);
  }

  /** The tenant's signing secret, made (with `make`) and stored the first time it is asked for. */
  async secret(tenantId: string, make: () => string): Promise<string> {
    return (await this.secrets(tenantId, make, undefined)).current;
  }

  /**
   * The tenant's current secret (made with `make` on first use) and, while a rotation's overlap lasts
   * (`previous_until` after `now`), the previous one: both sign deliveries until then.
   */
  async secrets(tenantId: string, make: () => string, now: string | undefined): Promise<WebhookSecrets> {
    await this.sql.run(
      `insert into ${this.sql.table('webhook_secrets')} (tenant_id, secret) values (?, ?) on conflict do nothing`,
      [tenantId, make()],
    );
    const rows = await this.sql.query<{
      secret: string;
      previous_secret: string | null;
      previous_until: string | null;
    }>(
      `select secret, previous_secret, ${isoColumn('previous_until')} from ${this.sql.table('webhook_secrets')} where tenant_id = ?`,
      [tenantId],
    );
    const r = rows[0]!;
    const overlapping =
      r.previous_secret !== null && r.previous_until !== null && (now === undefined || r.previous_until > now);
    return overlapping
      ? { current: r.secret, previous: r.previous_secret!, previousUntil: r.previous_until! }
      : { current: r.secret };
  }

  /**
   * Replaces the tenant's secret with `next`; the one it replaces keeps signing deliveries (next to the
   * new one) until `previousUntil` (`now`: at once no more). A tenant with no secret yet gets `next` alone.
   * One statement: two rotations at once leave one of them, with the secret before it as previous.
   */
  async rotate(tenantId: string, next: string, previousUntil: string, now: string): Promise<WebhookSecrets> {
    const rows = await this.sql.query<{
      secret: string;
      previous_secret: string | null;
      previous_until: string | null;
    }>(
      `insert into ${this.sql.table('webhook_secrets')} as w (tenant_id, secret, rotated_at) values (?, ?, ?)
       on conflict (tenant_id) do update set previous_secret = w.secret, previous_until = ?::timestamptz,
         secret = excluded.secret, rotated_at = excluded.rotated_at
       returning secret, previous_secret, ${isoColumn('previous_until')}`,
      [tenantId, next, now, previousUntil],
    );
    const r = rows[0]!;
    return r.previous_secret !== null && r.previous_until !== null && r.previous_until > now
      ? { current: r.secret, previous: r.previous_secret, previousUntil: r.previous_until }
      : { current: r.secret };
  }
}

/** The secrets that sign a tenant's deliveries now: the current one, and the previous one during an overlap. */
export interface WebhookSecrets {
  current: string;
  previous?: string;
  previousUntil?: string;
}
