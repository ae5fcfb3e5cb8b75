#!/usr/bin/env node
// Runs a TypeScript entry point from source: workspace packages resolve to their `src/` through the
// `ratchet-src` export condition, and @swc-node/register compiles with decorator metadata (Nest needs it).
//   node scripts/run-ts.mjs <entry.ts> [args...]
// Other scripts import the helpers below (scripts/start.mjs runs every service this way).
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Node flags that make `node <flags> file.ts` run TypeScript sources of this workspace. */
export function tsNodeArgs() {
  return ['--conditions=ratchet-src', '--enable-source-maps', '-r', '@swc-node/register'];
}

/** `env` plus what @swc-node/register needs to compile with the workspace's tsconfig. */
export function tsNodeEnv(env = process.env) {
  return { ...env, SWC_NODE_PROJECT: path.join(root, 'tsconfig.json') };
}

/** Spawns a TypeScript entry point (relative to the repository root) as a child process. */
export function spawnTs(entry, args = [], options = {}) {
  return spawn(process.execPath, [...tsNodeArgs(), path.resolve(root, entry), ...args], {
    cwd: root,
    ...options,
    env: tsNodeEnv(options.env ?? process.env),
  });
}

function main() {
  const [entry, ...args] = process.argv.slice(2);
  if (!entry) {
    console.error('usage: run-ts.mjs <entry.ts> [args...]');
    process.exit(2);
  }
  const child = spawnTs(entry, args, { stdio: 'inherit', cwd: process.cwd() });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

const invoked = process.argv[1] ? realpathSync(path.resolve(process.argv[1])) : '';
if (invoked === realpathSync(fileURLToPath(import.meta.url))) main();
