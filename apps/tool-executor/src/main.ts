import 'reflect-metadata';
import { TOOLS_MIGRATIONS } from '@ratchet/adapters';
import { loadConfig, runMain, startService } from '@ratchet/platform';
import { BUILTIN_TOOLS, ToolRegistry } from '@ratchet/tools';
import { TOOL_CONSUMER } from './effects/tool-call.controller';
import { toolExecutorConfigSchema } from './tool-executor.config';
import { ToolExecutorModule } from './tool-executor.module';

runMain('tool-executor', async () => {
  const config = loadConfig(toolExecutorConfigSchema, process.env, 'tool-executor');
  const tools = new ToolRegistry(BUILTIN_TOOLS);
  await startService({
    service: 'tool-executor',
    schema: 'tools',
    migrations: TOOLS_MIGRATIONS,
    consumers: [TOOL_CONSUMER],
    config,
    healthPort: config.HEALTH_PORT,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    module: (runtime) => ToolExecutorModule.create(runtime, tools),
  });
});
