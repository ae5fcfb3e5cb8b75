import { MemoryClient } from '@ratchet/adapters';
import {
  AgentsReply,
  SchedulesReply,
  WebhooksReply,
  type SchedulesRequest,
  type WebhooksRequest,
  subjects as subjectsOf,
  THREADS_CONTRACTS,
  ToolsReply,
  threadsSubject,
  type AgentsRequest,
  type ThreadsOp,
  type ThreadsReply,
  type ThreadsRequestInput,
} from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';
import type { NatsConnection } from 'nats';

/**
 * The services behind the HTTP API, over NATS request/reply: thread/run/event queries (orchestrator,
 * `<prefix>.threads.<tenant>.<op>`), agent definitions (orchestrator, `<prefix>.agents.<tenant>.<op>`),
 * the tool catalog (tool executor, `<prefix>.tools.<tenant>.list`) and
 * memory (memory service, `<prefix>.memory.<tenant>.<op>`). The tenant always comes from the verified
 * principal. No answer in time is a TransientError: 503 + Retry-After to the client.
 */
export class Backends {
  readonly memory: MemoryClient;
  private readonly prefix: string;
  private readonly timeoutMs: number;

  constructor(
    private readonly nc: NatsConnection,
    options: { subjectPrefix: string; timeoutMs: number },
  ) {
    this.prefix = options.subjectPrefix;
    this.timeoutMs = options.timeoutMs;
    this.memory = new MemoryClient(nc, { subjectPrefix: this.prefix, timeoutMs: this.timeoutMs });
  }

  async threads<O extends ThreadsOp>(
    tenant: string,
    op: O,
    request: ThreadsRequestInput<O>,
    timeoutMs = this.timeoutMs,
  ): Promise<ThreadsReply<O>> {
    const raw = await this.request(threadsSubject(this.prefix, tenant, op), request, `threads ${op}`, timeoutMs);
    return THREADS_CONTRACTS[op].reply.parse(raw) as ThreadsReply<O>;
  }

  /** A tenant's agents (`<prefix>.agents.<tenant>.<op>`), or the deployment's shared ones. */
  async agents(scope: { tenant: string } | 'deployment', request: AgentsRequest): Promise<AgentsReply> {
    const s = subjectsOf(this.prefix);
    const subject = scope === 'deployment' ? s.deploymentAgents(request.op) : s.agents(scope.tenant, request.op);
    return AgentsReply.parse(await this.request(subject, request, `agents ${request.op}`));
  }

  /** A tenant's schedules (`<prefix>.schedules.<tenant>.<op>`, the orchestrator's). */
  async schedules(tenant: string, request: SchedulesRequest): Promise<SchedulesReply> {
    const raw = await this.request(
      subjectsOf(this.prefix).schedules(tenant, request.op),
      request,
      `schedules ${request.op}`,
    );
    return SchedulesReply.parse(raw);
  }

  /** A tenant's webhook deliveries and signing secret (`<prefix>.webhooks.<tenant>.<op>`, the orchestrator's). */
  async webhooks(tenant: string, request: WebhooksRequest): Promise<WebhooksReply> {
    const raw = await this.request(
      subjectsOf(this.prefix).webhooks(tenant, request.op),
      request,
      `webhooks ${request.op}`,
    );
    return WebhooksReply.parse(raw);
  }

  /** The tools a tenant's runs may call (the tool executor's catalog, `<prefix>.tools.<tenant>.list`). */
  async tools(tenant: string): Promise<ToolsReply> {
    const raw = await this.request(subjectsOf(this.prefix).tools(tenant, 'list'), { op: 'list' }, 'tools list');
    return ToolsReply.parse(raw);
  }

  private async request(subject: string, body: unknown, what: string, timeoutMs = this.timeoutMs): Promise<unknown> {
    try {
      const msg = await this.nc.request(subject, JSON.stringify(body), { timeout: timeoutMs });
      return JSON.parse(new TextDecoder().decode(msg.data));
    } catch (error) {
      throw new TransientError(`${what}: no answer on ${subject}`, 'backend.unavailable', { cause: error });
    }
  }
}
