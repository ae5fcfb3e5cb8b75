import {
  decodeListCursor,
  encodeListCursor,
  InvalidCursorError,
  MemoryItemsRepository,
  withServiceTx,
  type Database,
  type ListPosition,
} from '@ratchet/adapters';
import type { MemoryOp, MemoryReply, MemoryRequest } from '@ratchet/contracts';
import {
  decideDelete,
  decideForget,
  decideGet,
  decidePut,
  memoryFailure,
  readScope,
  type MemoryRules,
} from '@ratchet/domain';

/** A write that loses a race without an expected version re-reads and decides again, this often. */
const MAX_ATTEMPTS = 3;

type Operations = { [O in MemoryOp]: (tenant: string, request: MemoryRequest<O>) => Promise<MemoryReply<O>> };

/**
 * The memory operations: read what is stored, let the pure rules decide, write under the guard the
 * rules chose. The tenant always comes from the request subject; every query is scoped by it, so
 * another tenant's item is indistinguishable from one that never existed.
 */
export class MemoryHandler {
  constructor(
    private readonly db: Database,
    private readonly rules: MemoryRules,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  handle<O extends MemoryOp>(tenant: string, op: O, request: MemoryRequest<O>): Promise<MemoryReply<O>> {
    return this.operations[op](tenant, request);
  }

  private readonly operations: Operations = {
    put: (tenant, request) => this.put(tenant, request),
    get: (tenant, request) => this.get(tenant, request),
    list: (tenant, request) => this.list(tenant, request),
    search: (tenant, request) => this.search(tenant, request),
    delete: (tenant, request) => this.delete(tenant, request),
    'forget-subject': (tenant, request) => this.forgetSubject(tenant, request),
  };

  private get items(): MemoryItemsRepository {
    return new MemoryItemsRepository(this.db.sql);
  }

  private async put(tenant: string, request: MemoryRequest<'put'>): Promise<MemoryReply<'put'>> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const stored = await this.items.find(tenant, request.namespace, request.key);
      const decision = decidePut(stored, request, this.clock(), this.rules);
      if (!decision.ok) return decision;
      if (await this.items.write(tenant, decision.item, decision.guard)) return { ok: true, item: decision.item };
      // Another writer changed the item between our read and our write: with an expected version that
      // is the caller's conflict; without one, read again and let the rules decide on the new state.
      if (request.expectedVersion !== undefined)
        return memoryFailure('version_conflict', `version ${request.expectedVersion} was changed by another writer`);
    }
    return memoryFailure('version_conflict', 'the item kept changing under concurrent writers; read it and try again');
  }

  private async get(tenant: string, request: MemoryRequest<'get'>): Promise<MemoryReply<'get'>> {
    const stored = await this.items.find(tenant, request.namespace, request.key);
    const decision = decideGet(stored, request, this.clock(), this.rules);
    if (!decision.ok) return decision;
    if (decision.refreshed) await this.items.extendExpiry(tenant, decision.item);
    return { ok: true, item: decision.item };
  }

  private async list(tenant: string, request: MemoryRequest<'list'>): Promise<MemoryReply<'list'>> {
    let after: ListPosition | undefined;
    try {
      after = request.cursor === undefined ? undefined : decodeListCursor(request.cursor);
    } catch (error) {
      if (error instanceof InvalidCursorError)
        return memoryFailure('invalid', `cursor: ${error.message}`, { field: 'cursor' });
      throw error;
    }
    const now = this.clock().toISOString();
    // Only what the principal may read is selected, so pages stay full and nothing leaks through counts.
    const page = await this.items.list(
      tenant,
      request.namespacePrefix,
      request.limit,
      now,
      after,
      readScope(request.principal),
    );
    return page.next
      ? { ok: true, items: page.items, nextCursor: encodeListCursor(page.next) }
      : { ok: true, items: page.items };
  }

  private async search(tenant: string, request: MemoryRequest<'search'>): Promise<MemoryReply<'search'>> {
    const now = this.clock().toISOString();
    const hits = await this.items.search(
      tenant,
      request.query,
      request.namespacePrefix,
      request.limit,
      now,
      readScope(request.principal),
    );
    return { ok: true, hits };
  }

  private async delete(tenant: string, request: MemoryRequest<'delete'>): Promise<MemoryReply<'delete'>> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const stored = await this.items.find(tenant, request.namespace, request.key);
      const decision = decideDelete(stored, request, this.clock());
      if (!decision.ok) return decision;
      if (await this.items.delete(tenant, request.namespace, request.key, decision.whereVersion))
        return { ok: true, version: decision.whereVersion };
      if (request.expectedVersion !== undefined)
        return memoryFailure('version_conflict', `version ${request.expectedVersion} was changed by another writer`);
    }
    return memoryFailure('version_conflict', 'the item kept changing under concurrent writers; read it and try again');
  }

  private async forgetSubject(
    tenant: string,
    request: MemoryRequest<'forget-subject'>,
  ): Promise<MemoryReply<'forget-subject'>> {
    const decision = decideForget(request);
    if (!decision.ok) return decision;
    // The erasure and its audit row commit together: no erasure without a record, no record without one.
    const erased = await withServiceTx(this.db, (tx) =>
      new MemoryItemsRepository(tx).forgetSubject(tenant, request.subject),
    );
    return { ok: true, erased };
  }
}
