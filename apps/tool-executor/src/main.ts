import 'reflect-metadata';
import { TOOLS_MIGRATIONS } from '@ratchet/adapters';
import { loadConfig, runMain, startService } from '@ratchet/platform';
import { BUILTIN_TOOLS, parseRemoteTools, remoteTool, ToolRegistry } from '@ratchet/tools';
import { natsToolTransport } from './effects/remote-transport';
import { CONTROL_CONSUMER } from './effects/run-stop.controller';
import { TOOL_CONSUMER } from './effects/tool-call.controller';
import { toolExecutorConfigSchema } from './tool-executor.config';
import { ToolExecutorModule } from './tool-executor.module';

runMain('tool-executor', async () => {
  const config = loadConfig(toolExecutorConfigSchema, process.env, 'tool-executor');
  const remote = parseRemoteTools(config.REMOTE_TOOLS);
  await startService({
    service: 'tool-executor',
    schema: 'tools',
    migrations: TOOLS_MIGRATIONS,
    consumers: [TOOL_CONSUMER, CONTROL_CONSUMER],
    config,
    healthPort: config.HEALTH_PORT,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    maxMessages: { [TOOL_CONSUMER]: config.TOOL_CONCURRENCY, [CONTROL_CONSUMER]: 8 },
    module: (runtime) => {
      const transport = natsToolTransport(runtime.nc, runtime.subjects);
      const tools = new ToolRegistry([...BUILTIN_TOOLS, ...remote.map((d) => remoteTool(d, transport))]);
      return ToolExecutorModule.create(runtime, tools);
    },
  });
});
