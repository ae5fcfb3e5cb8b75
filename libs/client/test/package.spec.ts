import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const npm = (cwd: string, args: string[]) => execFileSync('npm', args, { cwd, encoding: 'utf8' });

/**
 * What `npm publish` would ship of @ratchet/client (and of @ratchet/contracts, its one dependency):
 * built files only, and a package that loads and type-checks in a project that is not this workspace.
 */
describe('@ratchet/client as a published package', () => {
  let dir: string;
  beforeAll(() => {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', 'libs/client'], { cwd: root });
    dir = mkdtempSync(path.join(tmpdir(), 'ratchet-client-pack-'));
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['client', 'contracts'])('@ratchet/%s packs its built files, README and package.json only', (lib) => {
    const [pack] = JSON.parse(npm(path.join(root, 'libs', lib), ['pack', '--dry-run', '--json'])) as {
      files: { path: string }[];
    }[];
    const files = pack!.files.map((f) => f.path);
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(
      files.filter((f) => !/^dist\/.+\.(js|d\.ts|js\.map)$/.test(f) && f !== 'README.md' && f !== 'package.json'),
    ).toEqual([]);
  });

  it('installs from its tarballs next to zod and nats, loads, and type-checks a consumer', () => {
    const modules = path.join(dir, 'node_modules');
    mkdirSync(path.join(modules, '@ratchet'), { recursive: true });
    for (const lib of ['client', 'contracts']) {
      const [pack] = JSON.parse(npm(path.join(root, 'libs', lib), ['pack', '--json', '--pack-destination', dir])) as {
        filename: string;
      }[];
      const target = path.join(modules, '@ratchet', lib);
      mkdirSync(target);
      execFileSync('tar', ['-xzf', path.join(dir, pack!.filename), '-C', target, '--strip-components=1']);
    }
    // The declared dependency (zod) and peer (nats), as a consumer's install would provide them.
    for (const dep of ['zod', 'nats']) symlinkSync(path.join(root, 'node_modules', dep), path.join(modules, dep));
    writeFileSync(
      path.join(dir, 'consumer.ts'),
      [
        "import { connect } from 'nats';",
        "import { RatchetClient, RunTimeoutError } from '@ratchet/client';",
        'export async function start(): Promise<string> {',
        "  const client = new RatchetClient(await connect(), { tenant: 'acme' });",
        "  const ids: { runId: string; threadId: string } = client.idsOf('order-42');",
        '  return ids.runId + String(RunTimeoutError.name);',
        '}',
      ].join('\n'),
    );
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, module: 'node16', moduleResolution: 'node16', noEmit: true, types: [] },
        files: ['consumer.ts'],
      }),
    );
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', dir], { cwd: dir });
    const loaded = execFileSync(
      process.execPath,
      ['-e', "const c = require('@ratchet/client'); console.log(typeof c.RatchetClient, c.RatchetClient.name)"],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(loaded.trim()).toBe('function RatchetClient');
  });
});
