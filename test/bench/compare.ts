import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Figure } from './stats';
import { table } from './stats';

const ROOT = path.resolve(__dirname, '../..');

/**
 * `--compare <ref>`: checks <ref> out into a temp worktree, gives it this tree's node_modules (every
 * entry symlinked, except the workspace packages, which must point at the worktree's own sources), copies
 * this bench into it (so both builds run the same workload), then runs the bench there and here back to
 * back and prints base/head ratios per figure.
 */
export async function compare(ref: string, argv: string[], log: (line: string) => void): Promise<void> {
  const passThrough = stripCompare(argv).filter((a) => a !== '--json');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ratchet-bench-'));
  const worktree = path.join(dir, 'wt');
  execFileSync('git', ['worktree', 'add', '--detach', worktree, ref], { cwd: ROOT, stdio: 'ignore' });
  try {
    linkNodeModules(worktree);
    cpSync(path.join(ROOT, 'test/bench'), path.join(worktree, 'test/bench-current'), { recursive: true });
    log(`compare: base = ${ref} (${worktree}), head = this tree`);
    const base = await runBench(worktree, 'test/bench-current/main.ts', passThrough, log);
    const head = await runBench(ROOT, 'test/bench/main.ts', passThrough, log);
    const rows = Object.entries(head.figures).map(([name, h]) => {
      const b = base.figures[name];
      const ratio = b && b.value !== 0 ? h.value / b.value : NaN;
      const improvement = b ? (h.better === 'lower' ? b.value / h.value : h.value / b.value) : NaN;
      return {
        figure: name,
        [`base (${ref})`]: b?.value ?? NaN,
        head: h.value,
        unit: h.unit,
        'head/base': ratio,
        better: Number.isFinite(improvement) ? `${improvement.toFixed(2)}×${improvement >= 1 ? '' : ' (worse)'}` : '-',
      };
    });
    process.stdout.write(
      `machine: ${head.machine.nproc} × ${head.machine.cpu}, node ${head.machine.node}; ` +
        `base ${ref} @ ${base.machine.commit}, head @ ${head.machine.commit}\n\n${table(rows)}\n` +
        `"better" is the improvement factor of head over base (for lower-is-better figures base/head).\n`,
    );
  } finally {
    execFileSync('git', ['worktree', 'remove', '--force', worktree], { cwd: ROOT, stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
}

function stripCompare(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--compare') i++;
    else out.push(argv[i] as string);
  }
  return out;
}

/** `npm ci` in the worktree is too slow: reuse this tree's packages, but keep @ratchet/* pointing at the worktree. */
function linkNodeModules(worktree: string): void {
  const from = path.join(ROOT, 'node_modules');
  const to = path.join(worktree, 'node_modules');
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from)) {
    if (entry === '@ratchet') continue;
    symlinkSync(path.join(from, entry), path.join(to, entry));
  }
  // The workspace links are relative (../../libs/x), so copied as links they resolve inside the worktree.
  mkdirSync(path.join(to, '@ratchet'));
  for (const entry of readdirSync(path.join(from, '@ratchet'))) {
    const pkg = ['libs', 'apps'].map((d) => path.join(worktree, d, entry)).find((p) => existsSync(p));
    if (pkg) symlinkSync(pkg, path.join(to, '@ratchet', entry));
  }
}

async function runBench(
  cwd: string,
  entry: string,
  args: string[],
  log: (line: string) => void,
): Promise<{ figures: Record<string, Figure>; machine: { nproc: number; cpu: string; node: string; commit: string } }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--conditions=ratchet-src',
        '--enable-source-maps',
        '-r',
        '@swc-node/register',
        path.join(cwd, entry),
        ...args,
        '--json',
      ],
      {
        cwd,
        env: { ...process.env, SWC_NODE_PROJECT: path.join(cwd, 'tsconfig.json') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => log(`[${path.basename(cwd)}] ${b.toString().trimEnd()}`));
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`bench in ${cwd} exited ${code}`));
      try {
        resolve(JSON.parse(stdout) as never);
      } catch (error) {
        reject(new Error(`bench in ${cwd} printed no JSON: ${(error as Error).message}`));
      }
    });
  });
}
