import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

export type ServiceName = 'gateway' | 'orchestrator' | 'tool-executor' | 'approvals' | 'memory';

const ROOT = path.resolve(__dirname, '../../..');

/** The command that runs a TypeScript entry from source, as `npm start` does. */
export function sourceCommand(entry: string): { command: string; args: string[]; env: Record<string, string> } {
  return {
    command: process.execPath,
    args: [
      '--conditions=ratchet-src',
      '--enable-source-maps',
      // Extra node flags for every service started this way, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
      ...(process.env['RATCHET_SERVICE_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean),
      '-r',
      '@swc-node/register',
      path.join(ROOT, entry),
    ],
    env: { SWC_NODE_PROJECT: path.join(ROOT, 'tsconfig.json') },
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** One service running as a real OS process, so a test can SIGKILL it anywhere. */
export class ServiceProcess {
  private output = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly name: ServiceName,
    readonly port: number,
    private readonly child: ChildProcess,
  ) {
    child.stdout?.on('data', (b: Buffer) => (this.output += b.toString()));
    child.stderr?.on('data', (b: Buffer) => (this.output += b.toString()));
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Starts the service; with `waitReady` (default) resolves once `/health/ready` answers 200. */
  static async start(
    name: ServiceName,
    env: Record<string, string>,
    options: { waitReady?: boolean; timeoutMs?: number } = {},
  ): Promise<ServiceProcess> {
    const chosen = env[name === 'gateway' ? 'GATEWAY_PORT' : 'HEALTH_PORT'] !== undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        return await ServiceProcess.startOnce(name, env, options);
      } catch (error) {
        // A free port found here can be taken by another process before the service binds it (many
        // services start at once on a busy machine): pick another one, unless the caller chose it.
        if (chosen || attempt >= 3 || !/EADDRINUSE/.test(String(error))) throw error;
      }
    }
  }

  private static async startOnce(
    name: ServiceName,
    env: Record<string, string>,
    options: { waitReady?: boolean; timeoutMs?: number },
  ): Promise<ServiceProcess> {
    const port = Number(env[name === 'gateway' ? 'GATEWAY_PORT' : 'HEALTH_PORT'] ?? (await freePort()));
    const cmd = sourceCommand(`apps/${name}/src/main.ts`);
    const portVar =
      name === 'gateway' ? { GATEWAY_PORT: String(port), GATEWAY_HOST: '127.0.0.1' } : { HEALTH_PORT: String(port) };
    const child = spawn(cmd.command, cmd.args, {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...cmd.env, ...env, ...portVar },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const svc = new ServiceProcess(name, port, child);
    if (options.waitReady ?? true) await svc.waitReady(options.timeoutMs ?? 60_000);
    return svc;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get logs(): string {
    return this.output;
  }

  /** Resolves once the process has written `text` (stdout or stderr); rejects after `timeoutMs`. */
  async waitForLog(text: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.output.includes(text)) {
      if (Date.now() > deadline)
        throw new Error(`${this.name} did not log "${text}" within ${timeoutMs} ms:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => (exited = true));
    while (Date.now() < deadline) {
      if (exited) throw new Error(`${this.name} exited before it was ready:\n${this.output}`);
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/health/ready`);
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error(`${this.name} was not ready within ${timeoutMs} ms:\n${this.output}`);
  }

  /** SIGKILL: no shutdown hook runs, exactly like a node dying. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    await this.exited;
  }
}

/** Runs a command to completion, collecting its output. */
export async function runProcess(
  command: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
