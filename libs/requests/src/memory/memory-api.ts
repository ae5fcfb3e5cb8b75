import type { MemoryOp } from '@ratchet/contracts';
import type { Database } from '@ratchet/adapters';
import { memoryFailure, type MemoryRules } from '@ratchet/domain';
import type { Logger } from '@ratchet/platform';
import { MemoryHandler } from './memory-handler';
import { isDataError, parseRequest, type AnyMemoryReply } from './memory-request';

/**
 * Memory items as requests and replies (`MEMORY_CONTRACTS[op]`): the body parsed against the op's schema,
 * the op decided by the pure rules and written under their guard (`MemoryHandler`). The tenant is the
 * caller's (the subject's); every query is scoped by it. Never rejects: every request gets a reply.
 */
export class MemoryApi {
  private readonly handler: MemoryHandler;

  constructor(
    db: Database,
    rules: MemoryRules,
    private readonly logger: Logger,
    clock?: () => Date,
  ) {
    this.handler = new MemoryHandler(db, rules, clock);
  }

  async answer(tenant: string, op: MemoryOp, data: Uint8Array): Promise<AnyMemoryReply> {
    const request = parseRequest(op, data);
    if (!request.ok) return request;
    try {
      return await this.handler.handle(tenant, op, request.value);
    } catch (error) {
      if (isDataError(error)) return memoryFailure('invalid', `the item cannot be stored: ${(error as Error).message}`);
      this.logger.error({ err: error, tenant, op }, 'memory request failed');
      return memoryFailure('unavailable', 'memory is unavailable; try again');
    }
  }
}
