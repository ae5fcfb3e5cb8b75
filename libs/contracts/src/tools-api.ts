import { z } from 'zod';
import { JsonObject } from './messages';

/**
 * The tool catalog, request/reply with the tool executor (which loads tool modules, finds remote tool
 * services and connects to MCP servers): `<prefix>.tools.<tenant>.list` — what that tenant's runs may
 * call; the tenant is the subject's — and `<prefix>.deployment.tools.list`, what every tenant is offered.
 */
export const ToolsRequest = z
  .object({
    op: z.literal('list'),
    names: z.array(z.string().max(128)).max(256).optional().describe('Only these tools (default: all)'),
  })
  .strict();
export type ToolsRequest = z.infer<typeof ToolsRequest>;

export const CatalogToolView = z
  .object({
    name: z.string(),
    description: z.string(),
    kind: z.enum(['pure', 'idempotent', 'at-most-once']),
    source: z.string().describe('builtin, module:<spec>, remote:<subject>, mcp:<server>'),
    scope: z
      .enum(['tenant', 'shared'])
      .describe("tenant: bound to the caller's tenant; shared: offered to every tenant"),
    local: z.boolean().describe('Runs inside the orchestrator (a local tool)'),
    parameters: JsonObject.describe('The JSON Schema the model receives'),
  })
  .describe('CatalogTool');
export type CatalogToolView = z.infer<typeof CatalogToolView>;

export const ToolProblemView = z
  .object({ source: z.string(), tool: z.string().optional(), code: z.string(), message: z.string() })
  .describe('ToolProblem');

export const ToolsReply = z.union([
  z.object({ ok: z.literal(true), tools: z.array(CatalogToolView), problems: z.array(ToolProblemView) }),
  z.object({
    ok: z.literal(false),
    error: z.object({ code: z.enum(['invalid', 'unavailable']), message: z.string() }),
  }),
]);
export type ToolsReply = z.infer<typeof ToolsReply>;
