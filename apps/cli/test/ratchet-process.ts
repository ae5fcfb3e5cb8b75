import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';

/** The real `ratchet` binary (TypeScript from source) as a child process, for integration and e2e tests. */
const ROOT = path.resolve(__dirname, '..', '..', '..');
const MAIN = path.join(ROOT, 'apps', 'cli', 'src', 'main.ts');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface LiveCli {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  /** Resolves once stdout satisfies `predicate` (rejects if the process exits first). */
  waitForOutput(predicate: (stdout: string) => boolean, timeoutMs?: number): Promise<string>;
  done: Promise<CliRun>;
}

export function startRatchet(args: string[], env: Record<string, string | undefined> = {}): LiveCli {
  const child = spawn(process.execPath, ['--conditions=ratchet-src', '-r', '@swc-node/register', MAIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, SWC_NODE_PROJECT: path.join(ROOT, 'tsconfig.json'), RATCHET_DEBUG: undefined, ...env },
  });
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const l of listeners) l();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 55_000);
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      for (const l of listeners) l();
      resolve({ code, stdout, stderr });
    });
  });
  return {
    child,
    stdout: () => stdout,
    done,
    waitForOutput(predicate, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (predicate(stdout)) {
            listeners.delete(check);
            clearTimeout(t);
            resolve(stdout);
          } else if (child.exitCode !== null) {
            listeners.delete(check);
            clearTimeout(t);
            reject(new Error(`ratchet exited ${child.exitCode} first; stdout:\n${stdout}\nstderr:\n${stderr}`));
          }
        };
        const t = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`output never matched; stdout:\n${stdout}\nstderr:\n${stderr}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
  };
}

export function ratchet(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  return startRatchet(args, env).done;
}

export const lines = (text: string) => text.split('\n').filter((l) => l !== '');
export const jsonLines = <T = Record<string, unknown>>(text: string) => lines(text).map((l) => JSON.parse(l) as T);
