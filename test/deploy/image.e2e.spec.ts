import { openServiceDatabase, type Database } from '@ratchet/adapters';
import type { ThreadEvent } from '@ratchet/contracts';
import { freePort, ledgerEffects } from '@ratchet/testing';
import { TestStack } from '../e2e/stack';
import { cli, Container, containerCli, ensureImage } from './containers';

/**
 * The production image, for real: built from deploy/Dockerfile (reused while its inputs are unchanged),
 * each of the five services run from it read-only as uid 1000 on the host's network against this
 * machine's Postgres and NATS, a run completed through the containerised gateway, and every container
 * stopped with SIGTERM (`stop`) while runs are in flight: each exits 0 after draining, and the
 * replacement containers finish every run exactly once.
 */
const BIN = containerCli();
const KEY = 'rk_e2e_image_key';
const TENANT = 'image';
const RUNS = 16;
const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);
const GRACE_MS = 5_000;

if (!BIN) {
  // The one case this file cannot run: no container engine at all (.ci/run installs podman when it can).
  process.stdout.write('image e2e: skipped — neither podman nor docker is installed\n');
}
const describeWithEngine = BIN ? describe : describe.skip;

describeWithEngine('the production image', () => {
  const bin = BIN!;
  let stack: TestStack;
  let tools: Database;
  let image: string;
  const containers: Container[] = [];
  const shortName = (c: { name: string }) => c.name.slice(c.name.lastIndexOf('.') + 1);

  const start = async (service: string, name: string, extra: Record<string, string> = {}) => {
    const port = await freePort();
    const portEnv: Record<string, string> =
      service === 'gateway' ? { GATEWAY_PORT: String(port), GATEWAY_HOST: '127.0.0.1' } : { HEALTH_PORT: String(port) };
    const c = await Container.start(
      bin,
      image,
      `ratchet-e2e-${stack.prefix.subject.replace(/[^a-zA-Z0-9_-]/g, '-')}.${name}`,
      {
        ...stack.env,
        SERVICE: service,
        SERVICE_INSTANCE_ID: name,
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
        LOG_LEVEL: 'warn',
        ...portEnv,
        ...extra,
      },
      port,
    );
    containers.push(c);
    return c;
  };

  beforeAll(async () => {
    const built = await ensureImage(bin);
    image = built.image;
    const size = await cli(bin, ['image', 'inspect', '--format', '{{.Size}}', image]);
    process.stdout.write(
      `image e2e: ${image} ${(Number(size) / 1e6).toFixed(0)} MB` +
        (built.built ? `, built in ${(built.buildMs / 1000).toFixed(0)} s` : ', reused') +
        '\n',
    );
    stack = await TestStack.create();
    tools = await openServiceDatabase(stack.testDb.url, 'tools');
  }, 20 * 60_000);

  afterAll(async () => {
    await Promise.all(containers.map((c) => c.remove()));
    await tools?.close();
    await stack?.stop();
  });

  it('holds the runtime only: no dev dependencies, tests, TypeScript sources or npm; runs as uid 1000', async () => {
    const listing = await cli(bin, [
      'run',
      '--rm',
      '--read-only',
      '--entrypoint',
      'sh',
      image,
      '-c',
      'id -u; ls node_modules; ls node_modules/@ratchet; find /app -path /app/node_modules -prune -o \\( -name "*.ts" -o -name "*.spec.js" -o -name "*.tsbuildinfo" -o -name src -o -name test \\) -print | head -n 20; command -v npm || echo no-npm',
    ]);
    const lines = listing.split('\n');
    expect(lines[0]).toBe('1000');
    for (const dev of [
      'jest',
      'typescript',
      'eslint',
      'nx',
      '@swc',
      'testcontainers',
      'prettier',
      'kubernetes-models',
    ]) {
      expect([dev, lines.includes(dev)]).toEqual([dev, false]);
    }
    expect(lines).not.toContain('testing'); // @ratchet/testing
    expect(lines.filter((l) => l.startsWith('/'))).toEqual([]);
    expect(lines[lines.length - 1]).toBe('no-npm');
  });

  it('five services run from the image, a run completes through the containerised gateway, and SIGTERM drains every one', async () => {
    const [gateway, orchestrator, executor, memory, approvals] = await Promise.all([
      start('gateway', 'gateway', { GATEWAY_BOOTSTRAP_API_KEY: KEY, GATEWAY_BOOTSTRAP_TENANT: TENANT }),
      start('orchestrator', 'orchestrator-1'),
      start('tool-executor', 'tools-1'),
      start('memory', 'memory'),
      start('approvals', 'approvals'),
    ]);
    await Promise.all([gateway, orchestrator, executor, memory, approvals].map((c) => c.waitReady()));
    // The image's own liveness probe (HEALTHCHECK) passes inside each container.
    for (const c of [gateway, orchestrator, executor, memory, approvals]) {
      await c.exec(['node', 'deploy/healthcheck.mjs']);
    }

    const post = async (i: number) => {
      const res = await fetch(`http://127.0.0.1:${gateway.port}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': `img-${i}` },
        body: JSON.stringify({ agent: 'demo', input: `What is the weather in Oslo and in town ${i}?` }),
      });
      expect(res.status).toBe(202);
      return (await res.json()) as { runId: string; threadId: string };
    };
    const done = (runId: string) => (ev: ThreadEvent[]) => ev.some((e) => e.runId === runId && TERMINAL.has(e.type));

    // The web console is in the image and served by the containerised gateway.
    const page = await fetch(`http://127.0.0.1:${gateway.port}/console/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('console.js');

    const first = await post(0);
    const firstEvents = await stack.waitFor(TENANT, first.threadId, done(first.runId), 60_000);
    expect(firstEvents.filter((e) => TERMINAL.has(e.type)).map((e) => e.type)).toEqual(['run.completed']);

    // Runs in flight, then the orchestrator and the executor stopped as a rollout stops them.
    const runs = [first];
    for (let i = 1; i <= RUNS; i++) runs.push(await post(i));
    const drained = await Promise.all([orchestrator.stop(), executor.stop()]);
    for (const s of drained) {
      expect([s.name, s.code, s.code === 0 ? '' : s.logs]).toEqual([s.name, 0, '']);
    }
    for (const c of [orchestrator, executor]) {
      expect(await c.logs()).not.toContain('still running');
    }
    // Their replacements (a new pod of the rollout) take what is left.
    const [orchestrator2, executor2] = await Promise.all([
      start('orchestrator', 'orchestrator-2'),
      start('tool-executor', 'tools-2'),
    ]);
    await Promise.all([orchestrator2.waitReady(), executor2.waitReady()]);

    for (const r of runs) {
      const events = await stack.waitFor(TENANT, r.threadId, done(r.runId), 120_000);
      expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
      expect([r.runId, events.filter((e) => TERMINAL.has(e.type)).map((e) => e.type)]).toEqual([
        r.runId,
        ['run.completed'],
      ]);
      const requested = events.filter((e) => e.type === 'tool.requested').length;
      const completed = events.filter((e) => e.type === 'tool.completed').length;
      expect([r.runId, completed]).toEqual([r.runId, requested]);
    }
    // Every effect ran once: none was cut off by the stop and executed again.
    const effects = await ledgerEffects(tools.sql, TENANT);
    expect(effects.length).toBeGreaterThanOrEqual(runs.length);
    expect(effects.filter((e) => e.attempts !== 1 || e.state !== 'succeeded')).toEqual([]);

    const rest = await Promise.all([gateway, orchestrator2, executor2, memory, approvals].map((c) => c.stop()));
    for (const s of rest) {
      expect([s.name, s.code, s.code === 0 ? '' : s.logs]).toEqual([s.name, 0, '']);
    }
    process.stdout.write(
      `image e2e: stopped ${[...drained, ...rest].map((s) => `${shortName(s)} in ${s.exitMs} ms`).join(', ')}\n`,
    );
  });
});
