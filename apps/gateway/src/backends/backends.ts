import { Inject, Injectable } from '@nestjs/common';
import { MemoryClient } from '@ratchet/adapters';
import {
  AgentsReply,
  THREADS_CONTRACTS,
  threadsSubject,
  type AgentsRequest,
  type ThreadsOp,
  type ThreadsReply,
  type ThreadsRequestInput,
} from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';
import type { NatsConnection } from 'nats';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG, NATS_CONNECTION } from '../gateway.tokens';

/**
 * The services behind the HTTP API, over NATS request/reply: thread/run/event queries (orchestrator,
 * `<prefix>.threads.<tenant>.<op>`), agent definitions (orchestrator, `<prefix>.agents.<op>`) and
 * memory (memory service, `<prefix>.memory.<tenant>.<op>`). The tenant always comes from the verified
 * principal. No answer in time is a TransientError: 503 + Retry-After to the client.
 */
@Injectable()
export class Backends {
  readonly memory: MemoryClient;
  private readonly prefix: string;
  private readonly timeoutMs: number;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.prefix = config.RATCHET_SUBJECT_PREFIX;
    this.timeoutMs = config.GATEWAY_QUERY_TIMEOUT_MS;
    this.memory = new MemoryClient(nc, { subjectPrefix: this.prefix, timeoutMs: this.timeoutMs });
  }

  async threads<O extends ThreadsOp>(tenant: string, op: O, request: ThreadsRequestInput<O>): Promise<ThreadsReply<O>> {
    const raw = await this.request(threadsSubject(this.prefix, tenant, op), request, `threads ${op}`);
    return THREADS_CONTRACTS[op].reply.parse(raw) as ThreadsReply<O>;
  }

  async agents(request: AgentsRequest): Promise<AgentsReply> {
    const raw = await this.request(`${this.prefix}.agents.${request.op}`, request, `agents ${request.op}`);
    return AgentsReply.parse(raw);
  }

  private async request(subject: string, body: unknown, what: string): Promise<unknown> {
    try {
      const msg = await this.nc.request(subject, JSON.stringify(body), { timeout: this.timeoutMs });
      return JSON.parse(new TextDecoder().decode(msg.data));
    } catch (error) {
      throw new TransientError(`${what}: no answer on ${subject}`, 'backend.unavailable', { cause: error });
    }
  }
}
