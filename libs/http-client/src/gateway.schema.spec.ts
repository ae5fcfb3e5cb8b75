import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');

describe('gateway.schema.ts', () => {
  it('is what openapi-typescript makes of docs/openapi.json (run `npm run docs:generate` when this fails)', () => {
    const out = execFileSync(process.execPath, [path.join(root, 'scripts/generate-http-client.mjs'), '--check'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(out).toContain('is up to date');
  });
});
