import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Msg, Subscription } from 'nats';
import { tenantOpOfSubject, type AgentsReply } from '@ratchet/contracts';
import { AgentCatalog } from '@ratchet/agents';
import { serveRequests, ServiceRuntime } from '@ratchet/platform';
import { AgentsApi, type AgentsScope } from '@ratchet/requests';

/**
 * Agent definitions over NATS request/reply (see `AgentsApi`): a tenant's catalog on
 * `<prefix>.agents.<tenant>.<op>` — the tenant is the subject's, bound by NATS permissions, never the
 * body's — and the deployment's shared agents on `<prefix>.deployment.agents.<op>`.
 */
@Injectable()
export class AgentsResponder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private subs: Subscription[] = [];
  private readonly api: AgentsApi;

  constructor(
    @Inject(AgentCatalog) catalog: AgentCatalog,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
  ) {
    this.api = new AgentsApi(catalog, runtime.logger);
  }

  onApplicationBootstrap(): void {
    const { subjects } = this.runtime;
    const serve = (subject: string, scopeOf: (msg: Msg) => AgentsScope | undefined) =>
      serveRequests(this.runtime.nc, subject, 'orchestrator-agents', (msg): Promise<AgentsReply> => {
        const scope = scopeOf(msg);
        return scope
          ? this.api.answer(scope, msg.data)
          : Promise.resolve({
              ok: false,
              error: { code: 'invalid', message: `not an agents subject: ${msg.subject}` },
            });
      });
    this.subs = [
      serve(subjects.agentsAll, (msg) => {
        const parsed = tenantOpOfSubject(subjects.prefix, 'agents', msg.subject);
        return parsed && { tenant: parsed.tenant };
      }),
      serve(subjects.deploymentAgentsAll, () => 'deployment'),
    ];
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.subs.map((s) => s.drain()));
  }
}
