import { z } from 'zod';
import { envBoolean, envInt, envMillis, envPort, extendConfig } from '@ratchet/platform';
import { EgressPolicy, McpServersConfig } from '@ratchet/tools';

/** `MCP_SERVERS`: a JSON list of MCP servers; every problem is named with its place in the list. */
const mcpServers = z
  .string()
  .default('[]')
  .transform((text, ctx) => {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: 'expected a JSON list of MCP servers ([{"name":..., "url"|"command":...}])',
      });
      return z.NEVER;
    }
    const parsed = McpServersConfig.safeParse(raw);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues)
      ctx.addIssue({ code: 'custom', message: `[${issue.path.join('.') || 'list'}]: ${issue.message}` });
    return z.NEVER;
  });

export const toolExecutorConfigSchema = extendConfig({
  HEALTH_PORT: envPort().default(9092),
  /** Tool calls handled at once. */
  /**
   * The share of TOOL_CONCURRENCY one tenant's tool calls use while another tenant's wait, in percent
   * (docs/security.md#fair-shares); alone a tenant uses every slot. 0 turns fair shares off.
   */
  TENANT_SHARE_PERCENT: envInt({ min: 0, max: 100 }).default(50),
  TOOL_CONCURRENCY: envInt({ min: 1, max: 1000 }).default(8),
  /**
   * How long an aborted tool attempt (its timeout, its run stopped) may take to settle before it is
   * abandoned: the next attempt of a call starts only after the previous one settled (docs/tools.md).
   */
  TOOL_ABORT_GRACE_MS: envMillis().default(5000),
  /** Tools served by other services, declared here: `name:kind[:timeoutMs],...` (docs/tools.md). */
  REMOTE_TOOLS: z.string().default(''),
  /** Modules exporting `defineTool` tools: comma-separated paths or package names (docs/tools.md). */
  TOOL_MODULES: z.string().default(''),
  /** Find remote tool services that describe themselves (NATS service discovery, `$SRV`). */
  REMOTE_DISCOVERY: envBoolean().default(true),
  /** How often discovery looks again (a service gone for two rounds leaves the catalog). */
  REMOTE_DISCOVERY_INTERVAL_MS: envMillis().default(5_000),
  /** MCP servers to connect to: a JSON list (docs/tools.md#mcp-servers). */
  MCP_SERVERS: mcpServers,
  /**
   * Addresses inside the deployment `http.request` may reach anyway: comma-separated host names
   * (`svc.internal`, `*.corp.example`), addresses and CIDRs (`10.1.0.0/16`, `::1`). Empty (the
   * default): loopback, link-local, private, CGNAT, metadata and reserved addresses are all refused.
   */
  HTTP_TOOL_ALLOW_INTERNAL: z
    .string()
    .default('')
    .transform((text, ctx) => {
      try {
        return EgressPolicy.fromList(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
});
export type ToolExecutorConfig = z.output<typeof toolExecutorConfigSchema>;
