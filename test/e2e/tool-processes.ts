import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { NatsConnection } from 'nats';
import type { ToolsReply } from '@ratchet/contracts';
import { sourceCommand } from '@ratchet/testing';

export const ROOT = path.resolve(__dirname, '../..');
export const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** A tool service (or MCP server) as its own OS process, so a test can SIGKILL it like any peer. */
export class ToolProcess {
  private output = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private constructor(
    readonly label: string,
    private readonly child: ChildProcess,
  ) {
    child.stdout?.on('data', (b: Buffer) => (this.output += b.toString()));
    child.stderr?.on('data', (b: Buffer) => (this.output += b.toString()));
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  /** A TypeScript entry, run from source as the services are. */
  static ts(label: string, entry: string, env: Record<string, string>): ToolProcess {
    const cmd = sourceCommand(entry);
    return ToolProcess.spawn(label, cmd.command, cmd.args, { ...cmd.env, ...env });
  }

  static spawn(label: string, command: string, args: string[], env: Record<string, string>): ToolProcess {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new ToolProcess(label, child);
  }

  get logs(): string {
    return this.output;
  }

  async waitForLog(text: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => (exited = true));
    while (!this.output.includes(text)) {
      if (exited || Date.now() > deadline)
        throw new Error(`${this.label} did not log "${text}" (${exited ? 'it exited' : 'timed out'}):\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    await this.exited;
  }
}

/** Polls a tenant's tool catalog until `done` holds. */
export async function catalogOf(
  nc: NatsConnection,
  prefix: string,
  tenant: string,
  done: (reply: Extract<ToolsReply, { ok: true }>) => boolean,
  timeoutMs = 60_000,
): Promise<Extract<ToolsReply, { ok: true }>> {
  const deadline = Date.now() + timeoutMs;
  let last: ToolsReply | undefined;
  while (Date.now() < deadline) {
    try {
      const msg = await nc.request(`${prefix}.tools.${tenant}.list`, JSON.stringify({ op: 'list' }), { timeout: 5000 });
      last = msg.json<ToolsReply>();
      if (last.ok && done(last)) return last;
    } catch {
      // the executor is not answering yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the catalog of ${tenant} never got there: ${JSON.stringify(last)}`);
}

interface SeenRequest {
  body: {
    messages: { role: string; content?: unknown }[];
    tools?: { function: { name: string; parameters: unknown } }[];
  };
}

/** An OpenAI-compatible chat completions server on loopback that records what it was sent. */
export class FakeModel {
  readonly seen: SeenRequest[] = [];
  private server: Server | undefined;
  baseUrl = '';
  constructor(private readonly answer: (request: SeenRequest, index: number) => unknown) {}

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const request = { body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as SeenRequest['body'] };
        const index = this.seen.push(request) - 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(this.answer(request, index)));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

export function toolCalls(calls: { id: string; tool: string; args: unknown }[]) {
  return {
    id: 'chatcmpl-tools',
    object: 'chat.completion',
    model: 'fake-model',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.tool.replaceAll('.', '__'), arguments: JSON.stringify(c.args) },
          })),
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
  };
}

export function answer(content: string) {
  return {
    id: 'chatcmpl-text',
    object: 'chat.completion',
    model: 'fake-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
  };
}
