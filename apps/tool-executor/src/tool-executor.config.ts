import { z } from 'zod';
import { ConfigError, envBoolean, envInt, envMillis, envPort, extendConfig } from '@ratchet/platform';
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
  /**
   * An idempotent call acts at once and its `started` row is written only once it has acted this long
   * (ADR 0043): a call that ends sooner costs one commit instead of two. `off`: `started` is committed
   * before it acts. Unset: 1000, or a third of RATCHET_ACK_WAIT_MS when that is shorter; at most a third
   * of it (the lease the claim takes is renewed that often).
   */
  TOOL_CLAIM_AFTER_MS: z
    .string()
    .optional()
    .transform((text, ctx) => {
      const value = text?.trim().toLowerCase();
      if (value === undefined || value === '') return undefined;
      if (value === 'off') return 'off' as const;
      if (/^\d+$/.test(value)) return Number(value);
      ctx.addIssue({ code: 'custom', message: 'expected a duration in milliseconds (an integer >= 0) or off' });
      return z.NEVER;
    }),
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

/** TOOL_CLAIM_AFTER_MS when unset (and the ack wait allows it). */
export const DEFAULT_CLAIM_AFTER_MS = 1000;

/**
 * TOOL_CLAIM_AFTER_MS against the ack wait: a deferred claim must be written well before a redelivery
 * could come (the lease it takes is renewed every third of the ack wait). Undefined: claims not deferred.
 */
export function claimAfter(setting: number | 'off' | undefined, ackWaitMs: number): number | undefined {
  const bound = Math.floor(ackWaitMs / 3);
  if (setting === 'off') return undefined;
  if (setting === undefined) return Math.min(DEFAULT_CLAIM_AFTER_MS, bound);
  if (setting > bound)
    throw new ConfigError('tool-executor', [
      {
        variable: 'TOOL_CLAIM_AFTER_MS',
        expected: `at most a third of RATCHET_ACK_WAIT_MS (${bound} ms), or off; got ${setting}`,
      },
    ]);
  return setting;
}
