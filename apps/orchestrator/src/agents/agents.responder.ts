import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Subscription } from 'nats';
import { AgentsRequest, type AgentsReply } from '@ratchet/contracts';
import { AgentDefinitionError, parseAgentDefinition, type StoredAgent } from '@ratchet/adapters';
import { ServiceRuntime } from '@ratchet/platform';
import { AgentCatalog } from './agent-catalog';

/**
 * Agent definitions over NATS request/reply: list, get (latest or a version), register (admin only).
 * A registered definition becomes a new version only when its content changed; runs in flight keep
 * the version they pinned.
 */
@Injectable()
export class AgentsResponder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private sub: Subscription | undefined;

  constructor(
    @Inject(AgentCatalog) private readonly catalog: AgentCatalog,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
  ) {}

  onApplicationBootstrap(): void {
    this.sub = this.runtime.nc.subscribe(this.runtime.subjects.agentsAll, {
      queue: 'orchestrator-agents',
      callback: (error, msg) => {
        if (error) return;
        void this.answer(msg.data).then((reply) => msg.respond(JSON.stringify(reply)));
      },
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.sub?.drain();
  }

  async answer(data: Uint8Array): Promise<AgentsReply> {
    let raw: unknown;
    try {
      raw = JSON.parse(new TextDecoder().decode(data));
    } catch {
      return { ok: false, error: { code: 'invalid', message: 'the request is not JSON' } };
    }
    const parsed = AgentsRequest.safeParse(raw);
    if (!parsed.success) {
      return {
        ok: false,
        error: {
          code: 'invalid',
          message: 'invalid agents request',
          problems: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
        },
      };
    }
    const request = parsed.data;
    try {
      switch (request.op) {
        case 'list':
          return { ok: true, agents: (await this.catalog.list()).map(view) };
        case 'get': {
          const agent = request.version
            ? await this.catalog.get(request.name, request.version)
            : await this.catalog.latest(request.name);
          return agent
            ? { ok: true, agent: view(agent) }
            : {
                ok: false,
                error: {
                  code: 'not_found',
                  message: `no agent ${request.name}${request.version ? ` v${request.version}` : ''}`,
                },
              };
        }
        case 'register': {
          if (!request.principal.roles.includes('admin'))
            return { ok: false, error: { code: 'forbidden', message: 'registering agents needs the admin role' } };
          const definition = parseAgentDefinition('request body', request.definition);
          const before = await this.catalog.latest(definition.name);
          const stored = await this.catalog.register(definition, 'request body');
          return { ok: true, agent: view(stored), created: before?.version !== stored.version };
        }
      }
    } catch (error) {
      if (error instanceof AgentDefinitionError)
        return { ok: false, error: { code: 'invalid', message: 'invalid agent definition', problems: error.problems } };
      if (error instanceof Error && /unknown tool/.test(error.message))
        return { ok: false, error: { code: 'invalid', message: error.message } };
      this.runtime.logger.error({ err: error }, 'agents request failed');
      return { ok: false, error: { code: 'unavailable', message: 'agent definitions are unavailable right now' } };
    }
  }
}

function view(agent: StoredAgent) {
  return { name: agent.name, version: agent.version, digest: agent.digest, definition: agent.definition };
}
