// Builds the web console (apps/gateway/console) into apps/gateway/console/dist, which the gateway
// serves at /console. Part of `npm run build`; a test or `npm start` from source runs it too.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const dir = path.join(root, 'apps/gateway/console');
const outdir = path.join(dir, 'dist');

export async function buildConsole({ quiet = false } = {}) {
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: { console: path.join(dir, 'src/main.tsx') },
    outdir,
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    // Workspace libraries (the generated gateway client) from their sources: no build of them needed first.
    conditions: ['ratchet-src'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    loader: { '.css': 'css' },
    legalComments: 'none',
    logLevel: quiet ? 'error' : 'info',
  });
  copyFileSync(path.join(dir, 'src/console.css'), path.join(outdir, 'console.css'));
  copyFileSync(path.join(dir, 'index.html'), path.join(outdir, 'index.html'));
  return outdir;
}

if (import.meta.url === `file://${process.argv[1]}`) await buildConsole();
