import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Msg, Subscription } from 'nats';
import { tenantOpOfSubject, ToolsRequest, type CatalogToolView, type ToolsReply } from '@ratchet/contracts';
import { serveRequests, ServiceRuntime } from '@ratchet/platform';
import { callKind, toolSpec, ToolCatalog } from '@ratchet/tools';

/**
 * The tool catalog over NATS request/reply: `<prefix>.tools.<tenant>.list` (that tenant's tools; the
 * tenant is the subject's, bound by NATS permissions) and `<prefix>.deployment.tools.list` (what every
 * tenant is offered). The orchestrator asks it for the schemas the model sees and to check agent
 * definitions; the gateway's `GET /v1/tools` relays to it.
 */
@Injectable()
export class ToolsResponder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private subs: Subscription[] = [];

  constructor(
    @Inject(ToolCatalog) private readonly catalog: ToolCatalog,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
  ) {}

  onApplicationBootstrap(): void {
    const { subjects, nc } = this.runtime;
    const serve = (subject: string, tenantOf: (msg: Msg) => string | undefined | null) =>
      serveRequests(nc, subject, 'tool-executor-catalog', (msg) => {
        const tenant = tenantOf(msg);
        return tenant === null
          ? Promise.resolve<ToolsReply>({
              ok: false,
              error: { code: 'invalid', message: `not a tools subject: ${msg.subject}` },
            })
          : this.answer(tenant, msg.data);
      });
    this.subs = [
      serve(subjects.toolsAll, (msg) => tenantOpOfSubject(subjects.prefix, 'tools', msg.subject)?.tenant ?? null),
      serve(subjects.deploymentTools('list'), () => undefined),
    ];
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.subs.map((s) => s.drain()));
  }

  async answer(tenant: string | undefined, data: Uint8Array): Promise<ToolsReply> {
    let request: ToolsRequest;
    try {
      request = ToolsRequest.parse(JSON.parse(new TextDecoder().decode(data)));
    } catch {
      return { ok: false, error: { code: 'invalid', message: 'expected {"op":"list","names"?:[...]}' } };
    }
    const wanted = request.names ? new Set(request.names) : undefined;
    // A named tool nobody offers yet may be a service that just started: look once more.
    if (wanted && tenant && [...wanted].some((n) => !this.catalog.get(tenant, n)))
      await Promise.all([...wanted].map((n) => this.catalog.resolve(tenant, n)));
    const tools: CatalogToolView[] = [];
    for (const { tool, scope } of this.catalog.list(tenant)) {
      if (wanted && !wanted.has(tool.name)) continue;
      let parameters;
      try {
        parameters = toolSpec(tool).parameters;
      } catch {
        continue;
      }
      tools.push({
        name: tool.name,
        description: tool.description,
        kind: callKind(tool, {}, {}),
        source: tool.source ?? 'builtin',
        scope,
        local: tool.local === true,
        parameters,
      });
    }
    const problems = this.catalog
      .problems(tenant)
      .filter((p) => !wanted || (p.tool !== undefined && wanted.has(p.tool)) || p.tool === undefined)
      .map((p) => ({ source: p.source, ...(p.tool ? { tool: p.tool } : {}), code: p.code, message: p.message }));
    return { ok: true, tools, problems };
  }
}
