import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Json, type JsonObject } from '@ratchet/contracts';
import type { DynamicToolSource, OfferedTool, ToolProblem } from '../catalog';
import { compileInputSchema, jsonSchemaInput, modelParameters } from '../json-schema';
import { defineTool, ToolError, type AnyTool, type ToolLogger } from '../tool';
import { mcpToolKind, mcpToolName, type McpServerConfig } from './mcp.config';

/** The `_meta` key that carries a call's idempotency key to the MCP server (dedup on it). */
export const MCP_IDEMPOTENCY_META = 'idempotencyKey';

interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean | undefined; idempotentHint?: boolean | undefined } | undefined;
}

/**
 * One MCP server as a tool source, through the official SDK. Connects in the background (a server
 * that is down or never answers delays nothing and is retried), lists its tools (`tools/list`, every
 * page) and lists again when it says they changed. Its tools stay offered while it is away, so a call
 * fails with a clear `mcp.unavailable` (or becomes uncertain, for an at-most-once tool that may have
 * acted) instead of becoming an unknown tool. Every request has a timeout: nothing waits forever.
 */
export class McpToolSource implements DynamicToolSource {
  readonly id: string;
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private tools: OfferedTool[] = [];
  private issues: ToolProblem[] = [];
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: McpServerConfig,
    private readonly logger: ToolLogger,
    private readonly options: { retryMs?: number; startWaitMs?: number } = {},
  ) {
    this.id = `mcp:${config.name}`;
  }

  offered(): readonly OfferedTool[] {
    return this.tools;
  }

  problems(): readonly ToolProblem[] {
    return this.issues;
  }

  /**
   * Starts connecting; resolves once the first attempt ended (listed, or failed and scheduled again),
   * or after `startWaitMs` at most: a server that never answers does not hold up the service.
   */
  async start(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.connect().catch(() => undefined),
      new Promise<void>((r) => (timer = setTimeout(r, this.options.startWaitMs ?? 5_000))),
    ]);
    clearTimeout(timer);
  }

  /**
   * A call named a tool nobody offers: if a connection attempt is under way (a server coming back),
   * its outcome is waited for. No new attempt starts here, so an unknown name never waits on a dead server.
   */
  async refresh(): Promise<void> {
    await this.connecting?.catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }

  private connect(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<Client> {
    const { config } = this;
    const client = new Client({ name: 'ratchet-tool-executor', version: '1' });
    const transport = config.url
      ? new StreamableHTTPClientTransport(new URL(config.url), {
          requestInit: { headers: resolveHeaders(config.headers) },
        })
      : new StdioClientTransport({
          command: config.command!,
          args: config.args,
          ...(config.env ? { env: config.env } : {}),
          stderr: 'ignore',
        });
    client.onclose = () => {
      if (this.client === client) this.client = undefined;
      if (!this.stopped) this.scheduleRetry('the connection closed');
    };
    try {
      await client.connect(transport, { timeout: config.timeoutMs });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.list(client));
      await this.list(client);
      this.client = client;
      return client;
    } catch (error) {
      await client.close().catch(() => undefined);
      const message = describeError(error, config.timeoutMs);
      this.issues = [{ source: this.id, code: 'mcp.unavailable', message: `${config.name}: ${message}` }];
      this.logger.warn('MCP server unavailable', { server: config.name, error: message });
      this.scheduleRetry(message);
      throw new ToolError('mcp.unavailable', `MCP server ${config.name}: ${message}`, true);
    }
  }

  private scheduleRetry(reason: string): void {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect().catch(() => undefined);
    }, this.options.retryMs ?? 5_000);
    this.retryTimer.unref();
    this.logger.info('MCP server: connecting again later', { server: this.config.name, reason });
  }

  private async list(client: Client): Promise<void> {
    const listed: ListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: this.config.timeoutMs });
      listed.push(...(page.tools as ListedTool[]));
      cursor = page.nextCursor;
    } while (cursor);
    const tools: OfferedTool[] = [];
    const issues: ToolProblem[] = [];
    const names = new Set<string>();
    for (const t of listed) {
      const name = mcpToolName(this.config.name, t.name);
      const compiled = compileInputSchema(t.inputSchema);
      const problem = (code: string, message: string) =>
        issues.push({ source: this.id, tool: name, code, message: `${this.config.name}/${t.name}: ${message}` });
      if (!compiled.ok) {
        problem('mcp.invalid_schema', compiled.problem);
        continue;
      }
      if (names.has(name)) {
        problem('tool.name_taken', `two tools of this server map to ${name}`);
        continue;
      }
      names.add(name);
      const tool = this.tool(name, t, compiled.validate);
      for (const tenant of this.config.tenants ?? [undefined]) tools.push({ tool, tenant });
    }
    this.tools = tools;
    this.issues = issues;
    for (const issue of issues) this.logger.warn('MCP tool withheld', { ...issue });
  }

  private tool(name: string, listed: ListedTool, validate: Parameters<typeof jsonSchemaInput>[0]): AnyTool {
    const kind = mcpToolKind(listed.annotations, this.config.kinds[listed.name]);
    const timeoutMs = this.config.timeoutMs;
    return {
      ...defineTool({
        name,
        description: listed.description?.trim() || `${listed.name} (MCP server ${this.config.name})`,
        kind,
        timeoutMs: timeoutMs + 1000,
        retry: kind === 'at-most-once' ? { attempts: 1, backoffMs: 0 } : { attempts: 3, backoffMs: 200 },
        input: jsonSchemaInput(validate),
        execute: async (args, ctx) => {
          let client: Client;
          try {
            client = await this.connect();
          } catch (error) {
            // Not connected: the call never left.
            throw error instanceof ToolError
              ? error
              : new ToolError('mcp.unavailable', describeError(error, timeoutMs), true);
          }
          return this.call(client, listed.name, args, ctx.idempotencyKey, ctx.signal, kind);
        },
      }),
      parameters: modelParameters(listed.inputSchema),
      source: this.id,
    };
  }

  private async call(
    client: Client,
    tool: string,
    args: JsonObject,
    key: string,
    signal: AbortSignal,
    kind: string,
  ): Promise<Json> {
    let result: Awaited<ReturnType<Client['callTool']>>;
    try {
      result = await client.callTool(
        { name: tool, arguments: args, _meta: { [MCP_IDEMPOTENCY_META]: key } },
        undefined,
        { timeout: this.config.timeoutMs, signal },
      );
    } catch (error) {
      throw callError(this.config.name, tool, error, this.config.timeoutMs, kind);
    }
    const content = Json.safeParse(result.content ?? []);
    const structured = Json.safeParse(result.structuredContent ?? null);
    if (result.isError === true) {
      // The server ran the tool and says it failed: a result the model reads, not an unknown outcome.
      throw new ToolError('mcp.tool_error', `${this.config.name}/${tool}: ${textOf(result.content)}`, false);
    }
    if (!content.success || !structured.success)
      throw new ToolError(
        'mcp.bad_reply',
        `${this.config.name}/${tool} answered with content that is not JSON`,
        false,
        {
          mayHaveActed: kind !== 'pure',
        },
      );
    return structured.data !== null
      ? { content: content.data, structuredContent: structured.data }
      : { content: content.data };
  }
}

/** A header value `${NAME}` is read from the environment, so a secret stays out of `MCP_SERVERS`. */
function resolveHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers ?? {}).map(([k, v]) => [
      k,
      v.replace(/^\$\{([A-Za-z0-9_]+)\}$/, (_, n: string) => process.env[n] ?? ''),
    ]),
  );
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return 'the tool reported an error';
  const text = content
    .map((c) =>
      c && typeof c === 'object' && (c as { type?: unknown }).type === 'text'
        ? String((c as { text?: unknown }).text)
        : '',
    )
    .filter(Boolean)
    .join(' ');
  return text.slice(0, 2000) || 'the tool reported an error';
}

function describeError(error: unknown, timeoutMs: number): string {
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return `no answer within ${timeoutMs} ms`;
  const e = error as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return `${e.message ?? String(error)}${cause ? ` (${cause})` : ''}`;
}

/**
 * What a failed `tools/call` means for the effect. Never reached the server (refused, not connected):
 * nothing happened, retryable. No answer in time, the connection dropped mid-call, or an answer that
 * is not MCP: it may have acted (an at-most-once call becomes uncertain). A JSON-RPC error the server
 * sent (invalid params, unknown tool): it refused, nothing happened.
 */
function callError(server: string, tool: string, error: unknown, timeoutMs: number, kind: string): ToolError {
  const what = `${server}/${tool}: ${describeError(error, timeoutMs)}`;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout)
      return new ToolError('mcp.timeout', what, true, { mayHaveActed: true });
    if (error.code === ErrorCode.ConnectionClosed)
      return new ToolError('mcp.connection_closed', what, true, { mayHaveActed: true });
    if (error.code === ErrorCode.InvalidParams) return new ToolError('invalid_arguments', what, false);
    if (error.code === ErrorCode.MethodNotFound || error.code === ErrorCode.InvalidRequest)
      return new ToolError('mcp.refused', what, false);
    return new ToolError('mcp.error', what, false, {
      mayHaveActed: kind !== 'pure' && error.code === ErrorCode.InternalError,
    });
  }
  const code = (error as { cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND')
    return new ToolError('mcp.unavailable', what, true, { mayHaveActed: false });
  // A reply the SDK could not parse, a reset connection, a fetch that failed mid-way: unknown outcome.
  return new ToolError('mcp.bad_reply', what, true, { mayHaveActed: true, cause: error });
}
