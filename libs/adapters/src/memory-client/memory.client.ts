import type { NatsConnection } from 'nats';
import {
  MEMORY_CONTRACTS,
  memorySubject,
  type MemoryOp,
  type MemoryReply,
  type MemoryRequestInput,
} from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';

export interface MemoryClientOptions {
  /** The deployment's subject prefix (RATCHET_SUBJECT_PREFIX). */
  subjectPrefix: string;
  /** How long to wait for the memory service's answer. Default 5000 ms. */
  timeoutMs?: number;
}

/**
 * Typed request/reply calls to the memory service. A rule that says no comes back as a reply with
 * `ok: false`; no answer at all (no responder, timeout) throws a TransientError (`memory.unavailable`),
 * which is worth retrying. Requests are validated by the service, where the bytes become values.
 *
 * @example
 * const memory = new MemoryClient(nc, { subjectPrefix: 'ratchet' });
 * const reply = await memory.get('acme', { principal, namespace: 'users/alice/preferences', key: 'theme' });
 */
export class MemoryClient {
  private readonly timeoutMs: number;

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: MemoryClientOptions,
  ) {
    this.timeoutMs = options.timeoutMs ?? 5000;
  }

  put(tenant: string, request: MemoryRequestInput<'put'>): Promise<MemoryReply<'put'>> {
    return this.call(tenant, 'put', request);
  }

  get(tenant: string, request: MemoryRequestInput<'get'>): Promise<MemoryReply<'get'>> {
    return this.call(tenant, 'get', request);
  }

  list(tenant: string, request: MemoryRequestInput<'list'>): Promise<MemoryReply<'list'>> {
    return this.call(tenant, 'list', request);
  }

  search(tenant: string, request: MemoryRequestInput<'search'>): Promise<MemoryReply<'search'>> {
    return this.call(tenant, 'search', request);
  }

  delete(tenant: string, request: MemoryRequestInput<'delete'>): Promise<MemoryReply<'delete'>> {
    return this.call(tenant, 'delete', request);
  }

  forgetSubject(tenant: string, request: MemoryRequestInput<'forget-subject'>): Promise<MemoryReply<'forget-subject'>> {
    return this.call(tenant, 'forget-subject', request);
  }

  private async call<O extends MemoryOp>(
    tenant: string,
    op: O,
    request: MemoryRequestInput<O>,
  ): Promise<MemoryReply<O>> {
    const subject = memorySubject(this.options.subjectPrefix, tenant, op);
    let data: Uint8Array;
    try {
      const msg = await this.nc.request(subject, new TextEncoder().encode(JSON.stringify(request)), {
        timeout: this.timeoutMs,
      });
      data = msg.data;
    } catch (error) {
      throw new TransientError(
        `memory ${op}: no answer on ${subject} (${(error as Error).message})`,
        'memory.unavailable',
        {
          cause: error,
        },
      );
    }
    return MEMORY_CONTRACTS[op].reply.parse(JSON.parse(new TextDecoder().decode(data))) as MemoryReply<O>;
  }
}
