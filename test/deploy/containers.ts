import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = path.resolve(__dirname, '../..');

/** The bases deploy/scripts/make-base-image.sh makes where no registry is reachable. */
export const LOCAL_BASE = { runtime: 'localhost/ratchet-node:20', build: 'localhost/ratchet-node-build:20' };

/** podman, else docker (CONTAINER_CLI overrides); undefined when neither is installed. */
export function containerCli(): string | undefined {
  const candidates = process.env['CONTAINER_CLI'] ? [process.env['CONTAINER_CLI']] : ['podman', 'docker'];
  return candidates.find((cli) => spawnSync(cli, ['version'], { stdio: 'ignore' }).status === 0);
}

export async function cli(bin: string, args: string[], timeoutMs = 60_000): Promise<string> {
  try {
    const { stdout } = await run(bin, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim();
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${bin} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

export async function imageExists(bin: string, image: string): Promise<boolean> {
  return cli(bin, ['image', 'inspect', image]).then(
    () => true,
    () => false,
  );
}

/**
 * A hash of everything the image is built from: the files git knows (tracked or not ignored) outside
 * what .dockerignore leaves out and what the runtime stage never sees, plus the base images' ids.
 */
export function contextHash(baseIds: string[]): string {
  const listed = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  const files = listed.stdout
    .split('\0')
    .filter((f) => f && /^(apps|libs|agents|deploy|scripts|package\.json|package-lock\.json|tsconfig|nx\.json)/.test(f))
    // What .dockerignore leaves out of the context.
    .filter(
      (f) =>
        !/\.spec\.ts$/.test(f) && !/\.md$/.test(f) && !f.startsWith('deploy/k8s/') && !f.startsWith('deploy/compose/'),
    )
    .sort();
  const hash = createHash('sha256');
  for (const id of baseIds) hash.update(`base ${id}\n`);
  for (const f of files) {
    let content: Buffer;
    try {
      content = readFileSync(path.join(ROOT, f));
    } catch {
      continue; // deleted in the work tree
    }
    hash.update(`${f}\0${createHash('sha256').update(content).digest('hex')}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The image from deploy/Dockerfile, built unless one with the same content hash exists. Bases: the
 * locally made ones when present (no registry here), else the Dockerfile's default (the official image).
 */
export async function ensureImage(bin: string): Promise<{ image: string; built: boolean; buildMs: number }> {
  const local = await imageExists(bin, LOCAL_BASE.runtime);
  const buildArgs = local
    ? ['--build-arg', `NODE_IMAGE=${LOCAL_BASE.runtime}`, '--build-arg', `BUILD_IMAGE=${LOCAL_BASE.build}`]
    : [];
  const baseIds = local
    ? await Promise.all(
        [LOCAL_BASE.runtime, LOCAL_BASE.build].map((i) => cli(bin, ['image', 'inspect', '--format', '{{.Id}}', i])),
      )
    : ['default'];
  const image = `localhost/ratchet:ctx-${contextHash(baseIds)}`;
  if (await imageExists(bin, image)) return { image, built: false, buildMs: 0 };
  const started = Date.now();
  await cli(
    bin,
    [
      'build',
      '-f',
      'deploy/Dockerfile',
      '--network=host',
      ...(bin.endsWith('podman') ? ['--format', 'docker'] : []),
      ...buildArgs,
      '-t',
      image,
      '-t',
      'localhost/ratchet:dev',
      ROOT,
    ],
    15 * 60_000,
  );
  return { image, built: true, buildMs: Date.now() - started };
}

/** One service running in a container from the image, on the host's network. */
export class Container {
  private constructor(
    readonly bin: string,
    readonly name: string,
    readonly port: number,
  ) {}

  static async start(
    bin: string,
    image: string,
    name: string,
    env: Record<string, string>,
    port: number,
  ): Promise<Container> {
    await cli(bin, ['rm', '-f', name]).catch(() => undefined);
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    await cli(bin, [
      'run',
      '-d',
      '--name',
      name,
      '--read-only',
      '--user',
      '1000:1000',
      '--network=host',
      '--cap-drop=ALL',
      '--security-opt=no-new-privileges',
      ...envArgs,
      image,
    ]);
    return new Container(bin, name, port);
  }

  async waitReady(timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!(await this.running())) throw new Error(`${this.name} exited before it was ready:\n${await this.logs()}`);
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/health/ready`);
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`${this.name} was not ready within ${timeoutMs} ms:\n${await this.logs()}`);
  }

  async running(): Promise<boolean> {
    return (await cli(this.bin, ['inspect', '--format', '{{.State.Running}}', this.name])) === 'true';
  }

  async exec(args: string[]): Promise<string> {
    return cli(this.bin, ['exec', this.name, ...args]);
  }

  /** `stop`: SIGTERM (the image's stop signal), SIGKILL only after `graceSeconds`; then the exit code. */
  async stop(graceSeconds = 30): Promise<{ name: string; code: number; exitMs: number; logs: string }> {
    const sent = Date.now();
    await cli(this.bin, ['stop', '-t', String(graceSeconds), this.name], (graceSeconds + 30) * 1000);
    const exitMs = Date.now() - sent;
    const code = Number(await cli(this.bin, ['inspect', '--format', '{{.State.ExitCode}}', this.name]));
    return { name: this.name, code, exitMs, logs: await this.logs() };
  }

  async logs(): Promise<string> {
    try {
      const { stdout, stderr } = await run(this.bin, ['logs', this.name], { maxBuffer: 64 * 1024 * 1024 });
      return stdout + stderr;
    } catch (error) {
      return String(error);
    }
  }

  async remove(): Promise<void> {
    await cli(this.bin, ['rm', '-f', this.name]).catch(() => undefined);
  }
}
