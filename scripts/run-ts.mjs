#!/usr/bin/env node
// Runs a TypeScript entry point from source: workspace packages resolve to their `src/` through the
// `ratchet-src` export condition, and @swc-node/register compiles with decorator metadata (Nest needs it).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: run-ts.mjs <entry.ts> [args...]');
  process.exit(2);
}
const child = spawn(process.execPath, [...tsNodeArgs(root), path.resolve(root, entry), ...args], {
  stdio: 'inherit',
  env: { ...process.env, SWC_NODE_PROJECT: path.join(root, 'tsconfig.json') },
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

export function tsNodeArgs() {
  return ['--conditions=ratchet-src', '--enable-source-maps', '-r', '@swc-node/register'];
}
