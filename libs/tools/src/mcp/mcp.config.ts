import { z } from 'zod';
import { TenantId } from '@ratchet/contracts';

const Kind = z.enum(['pure', 'idempotent', 'at-most-once']);

/**
 * One MCP server the tool executor connects to (`MCP_SERVERS`, a JSON list): over streamable HTTP
 * (`url`) or as a local command speaking stdio (`command`; only a deployment's configuration can name
 * one — it runs on the executor's machine). Its tools are offered as `<name>.<tool>` to every tenant,
 * or only to `tenants`.
 */
export const McpServerConfig = z
  .object({
    name: z
      .string()
      .regex(/^[a-z][a-z0-9_-]*$/, 'lower-case name like "crm"')
      .max(64),
    url: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe('Streamable HTTP endpoint'),
    headers: z.record(z.string(), z.string()).optional().describe('HTTP headers sent with every request'),
    command: z.string().min(1).optional().describe('A local command speaking MCP over stdio'),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).optional().describe('Environment of the command'),
    tenants: z.array(TenantId).min(1).optional().describe('Only these tenants see its tools; absent: every tenant'),
    timeoutMs: z
      .number()
      .int()
      .positive()
      .max(600_000)
      .default(30_000)
      .describe('Per request (initialize, tools/list, tools/call)'),
    kinds: z
      .record(z.string(), Kind)
      .default({})
      .describe("Kind per tool name (the server's name), over what its annotations say"),
  })
  .strict()
  .refine((c) => (c.url === undefined) !== (c.command === undefined), 'give exactly one of "url" or "command"');
export type McpServerConfig = z.infer<typeof McpServerConfig>;

export const McpServersConfig = z.array(McpServerConfig).superRefine((servers, ctx) => {
  const seen = new Set<string>();
  servers.forEach((s, i) => {
    if (seen.has(s.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${s.name}" is listed twice` });
    seen.add(s.name);
  });
});

export type ToolKindName = z.infer<typeof Kind>;

/**
 * The kind of an MCP tool: the configuration's, else from its annotations — `readOnlyHint` → pure,
 * `idempotentHint` → idempotent, anything else (no hints) → at-most-once, the safe default.
 */
export function mcpToolKind(
  annotations: { readOnlyHint?: boolean | undefined; idempotentHint?: boolean | undefined } | undefined,
  override: ToolKindName | undefined,
): ToolKindName {
  if (override) return override;
  if (annotations?.readOnlyHint === true) return 'pure';
  if (annotations?.idempotentHint === true) return 'idempotent';
  return 'at-most-once';
}

/** `<server>.<tool>` when that is a valid tool name; otherwise lower-cased with other characters as `_`. */
export function mcpToolName(server: string, tool: string): string {
  const plain = `${server}.${tool}`;
  if (/^[a-z][a-z0-9_.-]*$/.test(plain) && plain.length <= 128) return plain;
  return `${server}.${tool.toLowerCase().replace(/[^a-z0-9_.-]/g, '_')}`.slice(0, 128);
}
