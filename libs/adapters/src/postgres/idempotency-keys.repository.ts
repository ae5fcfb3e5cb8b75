import { isoColumn, type SqlExecutor } from './sql';

/** A key as the gateway asks for it: the request it names and who sent it. */
export interface KeyClaim {
  tenantId: string;
  key: string;
  /** The route, e.g. `POST /v1/runs/:runId/cancel`. */
  operation: string;
  /** What the request asked, hashed (the same request gives the same fingerprint). */
  fingerprint: string;
  principalId: string;
  /** Until when the claimant holds the key while it answers (ISO time). */
  holdUntil: string;
  /** The time of the claim (ISO): a hold that ended before it is free to take over. */
  now: string;
}

/** A key's row when another request holds or answered it. */
export interface HeldKey {
  operation: string;
  fingerprint: string;
  answer?: { status: number; body: unknown };
  lockedUntil?: string;
}

/** What a claim found: the key is the caller's to answer (new, or taken over), or someone else's row. */
export type KeyClaimResult = { use: 'answer' } | { use: 'taken'; held: HeldKey };

/**
 * The gateway's record of Idempotency-Keys (schema `gateway`, docs/api.md#idempotency-keys): per tenant
 * and key, the request it named and, once answered, the answer. A claim is one statement, so two
 * concurrent first uses cannot both answer.
 */
export class IdempotencyKeysRepository {
  constructor(private readonly sql: SqlExecutor) {}

  /**
   * Claims a key: free, the caller answers; held by the same request past its hold (the gateway that
   * held it died), the caller takes it over; a row an older gateway wrote (no answer, no hold) is a run
   * request, taken over too — its answer is derived from the key again. Otherwise the row as it is.
   */
  async claim(claim: KeyClaim): Promise<KeyClaimResult> {
    const t = this.sql.table('idempotency_keys');
    const rows = await this.sql.query<{ ok: boolean }>(
      `insert into ${t} as k (tenant_id, key, operation, request_digest, principal_id, locked_until, created_at)
       values (?, ?, ?, ?, ?, ?, ?)
       on conflict (tenant_id, key) do update
         set locked_until = excluded.locked_until, operation = excluded.operation,
             request_digest = excluded.request_digest, principal_id = excluded.principal_id
         where k.response is null and (
           k.locked_until is null
           or (k.locked_until < ?::timestamptz and k.operation = excluded.operation
               and k.request_digest = excluded.request_digest))
       returning true as ok`,
      [
        claim.tenantId,
        claim.key,
        claim.operation,
        claim.fingerprint,
        claim.principalId,
        claim.holdUntil,
        claim.now,
        claim.now,
      ],
    );
    if (rows[0]?.ok) return { use: 'answer' };
    const [row] = await this.sql.query<{
      operation: string;
      request_digest: string;
      status: number | null;
      response: unknown;
      locked_until: string | null;
    }>(
      `select operation, request_digest, status, response, ${isoColumn('locked_until')} from ${t}
        where tenant_id = ? and key = ?`,
      [claim.tenantId, claim.key],
    );
    // Pruned or erased between the two statements: claim it again.
    if (!row) return this.claim(claim);
    return {
      use: 'taken',
      held: {
        operation: row.operation,
        fingerprint: row.request_digest,
        ...(row.status !== null ? { answer: { status: row.status, body: row.response } } : {}),
        ...(row.locked_until !== null ? { lockedUntil: row.locked_until } : {}),
      },
    };
  }

  /** Stores the answer of the request that claimed the key, with the thread and run it names. */
  async answer(
    tenantId: string,
    key: string,
    answer: { status: number; body: unknown; threadId?: string | undefined; runId?: string | undefined },
  ): Promise<void> {
    await this.sql.run(
      `update ${this.sql.table('idempotency_keys')}
          set status = ?, response = ?::jsonb, thread_id = ?, run_id = ?, locked_until = null
        where tenant_id = ? and key = ? and response is null`,
      [
        answer.status,
        JSON.stringify(answer.body ?? null),
        answer.threadId ?? null,
        answer.runId ?? null,
        tenantId,
        key,
      ],
    );
  }

  /** Frees a key whose request failed before it was answered, so a retry with it is done afresh. */
  async release(tenantId: string, key: string): Promise<void> {
    await this.sql.run(
      `delete from ${this.sql.table('idempotency_keys')} where tenant_id = ? and key = ? and response is null`,
      [tenantId, key],
    );
  }
}
