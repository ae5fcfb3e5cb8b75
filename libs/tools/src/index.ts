export {
  callKind,
  defineTool,
  LOCAL_TOOL_TIMEOUT_MAX_MS,
  ToolError,
  toolLogger,
  toolSpec,
  type AnyTool,
  type ToolContext,
  type ToolDefinition,
  type ToolKind,
  type ToolLogger,
  type ToolMemory,
} from './tool';
export { ToolRegistry } from './registry';
export { RemoteToolDiscovery, type RemoteDiscoveryOptions } from './remote-discovery';
export {
  describedRemoteTool,
  parseRemoteDescription,
  parseRemoteTools,
  RemoteDescriptionError,
  remoteTool,
  type RemoteToolDeclaration,
  type RemoteToolTransport,
} from './remote';
export { benchNoop, BUILTIN_TOOLS, demoWeather } from './builtin/demo.tools';
export {
  createHttpRequestTool,
  hostAllowed,
  HTTP_MAX_RESPONSE_BYTES,
  httpRequest,
  withEgressPolicy,
} from './builtin/http.tools';
export { memorySave, memorySearch } from './builtin/memory.tools';
export { waitExternal } from './builtin/wait.tools';
export { openWaitpoint, waitpointIdFor, type WaitpointTerms } from './waitpoints';
export {
  DEMO_EFFECT_TOOLS,
  DEMO_EFFECT_URL_ENV,
  demoEffectCharge,
  demoEffectPayout,
  demoEffectRead,
  demoEffectUpsert,
} from './builtin/effect-demo.tools';
export { DEFAULT_ABORT_GRACE_MS, runTool, toolContext, type ToolRunOutcome, type ToolServices } from './run-tool';
export { abandonedAttempts, AbandonedAttempts } from './abandoned-attempts';
export {
  ToolCatalog,
  type CatalogScope,
  type DynamicToolSource,
  type OfferedTool,
  type ToolLookup,
  type ToolProblem,
} from './catalog';
export {
  compileInputSchema,
  compileValueSchema,
  jsonSchemaInput,
  modelParameters,
  problemsOf,
  schemaIssues,
  type CompiledSchema,
} from './json-schema';
export { loadToolModules, parseToolModuleList, ToolModuleError } from './modules';
export { McpServerConfig, McpServersConfig, mcpToolKind, mcpToolName, type ToolKindName } from './mcp/mcp.config';
export { MCP_IDEMPOTENCY_META, McpToolSource } from './mcp/mcp.source';
export {
  EgressPolicy,
  EgressRefusedError,
  isInternalAddress,
  type EgressPolicyOptions,
  type Resolver,
} from './builtin/egress';
