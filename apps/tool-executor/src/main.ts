import 'reflect-metadata';
import { TOOLS_MIGRATIONS } from '@ratchet/adapters';
import { ConfigError, loadConfig, runMain, startService } from '@ratchet/platform';
import {
  BUILTIN_TOOLS,
  loadToolModules,
  McpToolSource,
  parseRemoteTools,
  parseToolModuleList,
  remoteTool,
  RemoteToolDiscovery,
  ToolCatalog,
  toolLogger,
  ToolModuleError,
  ToolRegistry,
  withEgressPolicy,
  type DynamicToolSource,
} from '@ratchet/tools';
import { subjects as subjectsOf } from '@ratchet/contracts';
import { natsToolTransport } from './effects/remote-transport';
import { CONTROL_CONSUMER } from './effects/run-stop.controller';
import { TOOL_CONSUMER } from './effects/tool-call.controller';
import { claimAfter, toolExecutorConfigSchema } from './tool-executor.config';
import { ToolExecutorModule } from './tool-executor.module';

runMain('tool-executor', async () => {
  const config = loadConfig(toolExecutorConfigSchema, process.env, 'tool-executor');
  let remote;
  try {
    remote = parseRemoteTools(config.REMOTE_TOOLS);
  } catch (error) {
    throw new ConfigError('tool-executor', [{ variable: 'REMOTE_TOOLS', expected: (error as Error).message }]);
  }
  const claimAfterMs = claimAfter(config.TOOL_CLAIM_AFTER_MS, config.RATCHET_ACK_WAIT_MS);
  const modules = await loadModules(config.TOOL_MODULES, 'tool-executor');
  const sources: (DynamicToolSource & { start(): Promise<void>; stop(): void | Promise<void> })[] = [];
  await startService({
    service: 'tool-executor',
    schema: 'tools',
    migrations: TOOLS_MIGRATIONS,
    consumers: [TOOL_CONSUMER, CONTROL_CONSUMER],
    config,
    healthPort: config.HEALTH_PORT,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    maxMessages: { [TOOL_CONSUMER]: config.TOOL_CONCURRENCY, [CONTROL_CONSUMER]: 8 },
    // One tenant's flood of slow tool calls waits behind its own share, not in front of other tenants'.
    ...(config.TENANT_SHARE_PERCENT > 0
      ? {
          fairShares: {
            [TOOL_CONSUMER]: {
              // `<prefix>.cmd.tool.<tenant>`: the tenant is the last token.
              keyOf: (subject: string) => subject.slice(subject.lastIndexOf('.') + 1),
              perKeyInFlight: Math.max(1, Math.ceil((config.TOOL_CONCURRENCY * config.TENANT_SHARE_PERCENT) / 100)),
            },
          },
        }
      : {}),
    module: (runtime) => {
      const transport = natsToolTransport(runtime.nc);
      const subjects = subjectsOf(runtime.subjects.prefix);
      const registry = new ToolRegistry([
        ...withEgressPolicy(BUILTIN_TOOLS, config.HTTP_TOOL_ALLOW_INTERNAL),
        ...modules,
        ...remote.map((d) => remoteTool(d, transport, subjects.toolService(d.name))),
      ]);
      const logger = toolLogger(runtime.logger.child({ component: 'tool-sources' }));
      if (config.REMOTE_DISCOVERY)
        sources.push(
          new RemoteToolDiscovery(runtime.nc, transport, logger, {
            prefix: runtime.subjects.prefix,
            intervalMs: config.REMOTE_DISCOVERY_INTERVAL_MS,
          }),
        );
      for (const server of config.MCP_SERVERS) sources.push(new McpToolSource(server, logger));
      return ToolExecutorModule.create(runtime, new ToolCatalog(registry, sources), sources, {
        abortGraceMs: config.TOOL_ABORT_GRACE_MS,
        claimAfterMs,
      });
    },
  });
});

/** Tool modules, loaded once at start; a module that cannot be used stops the service (exit 78). */
export async function loadModules(spec: string, service: string) {
  try {
    return await loadToolModules(parseToolModuleList(spec), {
      taken: new Map(BUILTIN_TOOLS.map((t) => [t.name, 'the built-in tools'])),
    });
  } catch (error) {
    if (error instanceof ToolModuleError)
      throw new ConfigError(service, [{ variable: 'TOOL_MODULES', expected: error.message }]);
    throw error;
  }
}
