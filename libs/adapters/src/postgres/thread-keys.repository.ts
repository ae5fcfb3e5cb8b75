import { randomBytes } from 'node:crypto';
import {
  ContentSealedError,
  TransientError,
  type ContentKeys,
  type DataKey,
  type KeyAbsence,
  type KeyWrapper,
} from '@ratchet/domain';
import type { SqlExecutor } from './sql';

/** How long an opened key is kept in a process: a key destroyed elsewhere is still used here for so long. */
const KEY_TTL_MS = 60_000;
const CACHE_MAX = 20_000;

interface Cached {
  key: DataKey;
  until: number;
}

/**
 * The threads' data keys in `orchestrator.thread_keys`, wrapped by a master key (a key file, or a KMS
 * behind the same `KeyWrapper`). Opened keys are cached for a minute, bounded; without a master key
 * nothing is made or opened (`configured` is false) and every sealed value reads as `unconfigured`.
 */
export class PgContentKeys implements ContentKeys {
  private readonly byThread = new Map<string, Cached>();
  private readonly byKid = new Map<string, Cached>();

  constructor(
    private readonly sql: SqlExecutor,
    private readonly master: KeyWrapper | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  get configured(): boolean {
    return this.master !== undefined;
  }

  async forThread(tenantId: string, threadId: string, subject: string, fresh = false): Promise<DataKey> {
    const master = this.requireMaster();
    const ref = `${tenantId}\u0000${threadId}`;
    const hit = fresh ? undefined : this.fresh(this.byThread, ref);
    if (hit) return hit;
    const t = this.sql.table('thread_keys');
    const live = `select kid, wrapped from ${t} where tenant_id = ? and thread_id = ?`;
    let rows = await this.sql.query<{ kid: string; wrapped: string }>(live, [tenantId, threadId]);
    if (rows.length === 0) {
      const kid = `k_${randomBytes(12).toString('base64url')}`;
      const wrapped = await master.wrap(randomBytes(32));
      // One key per thread (a unique index): a concurrent first write keeps the other's key.
      await this.sql.run(
        `insert into ${t} (kid, tenant_id, thread_id, subject, wrapped) values (?, ?, ?, ?, ?)
         on conflict (tenant_id, thread_id) do nothing`,
        [kid, tenantId, threadId, subject, wrapped],
      );
      rows = await this.sql.query<{ kid: string; wrapped: string }>(live, [tenantId, threadId]);
    }
    const row = rows[0];
    // Made and then gone (erased in between): the message is tried again.
    if (!row)
      throw new TransientError(`thread ${tenantId}/${threadId}: its data key could not be made`, 'keys.unavailable');
    const key = { kid: row.kid, key: await master.unwrap(row.wrapped) };
    this.remember(this.byThread, ref, key);
    this.remember(this.byKid, key.kid, key);
    return key;
  }

  async byIds(kids: readonly string[]): Promise<Map<string, DataKey | KeyAbsence>> {
    const out = new Map<string, DataKey | KeyAbsence>();
    const missing: string[] = [];
    for (const kid of new Set(kids)) {
      const hit = this.fresh(this.byKid, kid);
      if (hit) out.set(kid, hit);
      else missing.push(kid);
    }
    if (missing.length === 0) return out;
    if (!this.master) {
      for (const kid of missing) out.set(kid, 'unconfigured');
      return out;
    }
    const rows = await this.sql.query<{ kid: string; wrapped: string }>(
      `select kid, wrapped from ${this.sql.table('thread_keys')} where kid = any(array[?]::text[])`,
      [missing],
    );
    const found = new Map(rows.map((r) => [r.kid, r.wrapped]));
    for (const kid of missing) {
      const wrapped = found.get(kid);
      if (wrapped === undefined) out.set(kid, 'unknown');
      else {
        const key = { kid, key: await this.master.unwrap(wrapped) };
        this.remember(this.byKid, kid, key);
        out.set(kid, key);
      }
    }
    return out;
  }

  /** Wraps every live key under the master key's current entry (after a rotation); how many moved. */
  async rewrap(): Promise<{ moved: number; live: number }> {
    const master = this.requireMaster();
    const t = this.sql.table('thread_keys');
    const rows = await this.sql.query<{ kid: string; wrapped: string }>(`select kid, wrapped from ${t}`);
    let moved = 0;
    for (const row of rows) {
      if (master.isCurrent(row.wrapped)) continue;
      const rewrapped = await master.wrap(await master.unwrap(row.wrapped));
      moved += await this.sql.run(`update ${t} set wrapped = ? where kid = ? and wrapped = ?`, [
        rewrapped,
        row.kid,
        row.wrapped,
      ]);
    }
    return { moved, live: rows.length };
  }

  private requireMaster(): KeyWrapper {
    if (!this.master) {
      throw new ContentSealedError('(none)', 'unconfigured', 'sealing content');
    }
    return this.master;
  }

  private fresh(map: Map<string, Cached>, id: string): DataKey | undefined {
    const hit = map.get(id);
    if (!hit) return undefined;
    if (hit.until < this.now()) {
      map.delete(id);
      return undefined;
    }
    return hit.key;
  }

  private remember(map: Map<string, Cached>, id: string, key: DataKey): void {
    if (map.size >= CACHE_MAX) map.delete(map.keys().next().value!);
    map.set(id, { key, until: this.now() + KEY_TTL_MS });
  }
}
