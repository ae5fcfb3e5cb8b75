import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, freePort, type TestDatabase } from '@ratchet/testing';
import { cli, containerCli, ensureImage, ROOT } from './containers';
import { dataOf, parseManifests, playable, probeUrls, toYaml, type Obj } from './kube-play';

/**
 * The rendered dev overlay, run: `kubectl kustomize deploy/k8s/overlays/dev`, its five Ratchet
 * Deployments played by `podman kube play` from the image the image test builds (the same
 * content-hashed tag: built once), each pod's startup, liveness and readiness probes answered, and a
 * run completed through the gateway with the overlay's bootstrap key and its agents ConfigMap. NATS is
 * a nats-server with the configuration the overlay gives its NATS pod (the ratchet-dev-nats-config and
 * ratchet-nats-accounts ConfigMaps, the ratchet-nats-passwords Secret): every service connects as its
 * own user with the permissions of deploy/, so a subject a service needs and may not use fails here.
 * (The overlay's nats, postgres and jaeger images come from registries this machine cannot reach; the
 * services use this machine's Postgres, a database of their own.)
 */
const BIN = containerCli();
const podman = BIN?.endsWith('podman') ? BIN : undefined;
if (!podman) process.stdout.write('kube play e2e: skipped — podman is not installed (kube play is podman only)\n');
const describeWithPodman = podman ? describe : describe.skip;
const NATS_SERVER = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server';

const until = async (what: string, check: () => Promise<boolean>, timeoutMs: number, onTimeout = async () => '') => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out waiting for ${what}\n${await onTimeout()}`);
};

describeWithPodman('podman kube play of the dev overlay', () => {
  const bin = podman!;
  let db: TestDatabase;
  let dir: string;
  let nats: ChildProcess | undefined;
  let natsLog = '';
  let played: Obj[] = [];
  let playFile = '';
  const ports: Record<string, number> = {};
  let bootstrapKey = '';

  beforeAll(async () => {
    const { image } = await ensureImage(bin);
    db = await createTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), 'ratchet-kube-play-'));
    const rendered = spawnSync('kubectl', ['kustomize', path.join(ROOT, 'deploy/k8s/overlays/dev')], {
      encoding: 'utf8',
    });
    if (rendered.status !== 0) throw new Error(`kubectl kustomize failed: ${rendered.stderr}`);
    const objects = parseManifests(rendered.stdout);
    const { configMaps, secrets } = dataOf(objects);
    bootstrapKey = [...secrets].find(([n]) => n.startsWith('ratchet-gateway-bootstrap'))![1]['api-key']!;

    // The dev NATS pod's configuration, on loopback ports of its own.
    const natsPort = await freePort();
    const natsConf = [...configMaps].find(([n]) => n.startsWith('ratchet-dev-nats-config'))![1]['nats-server.conf']!;
    mkdirSync(path.join(dir, 'nats', 'accounts'), { recursive: true });
    writeFileSync(
      path.join(dir, 'nats', 'nats-server.conf'),
      natsConf
        .replace('listen: 0.0.0.0:4222', `listen: 127.0.0.1:${natsPort}`)
        .replace(/^http: .*$/m, '')
        .replace('store_dir: /data/jetstream', `store_dir: ${path.join(dir, 'nats', 'data')}`),
    );
    writeFileSync(
      path.join(dir, 'nats', 'accounts', 'ratchet-accounts.conf'),
      configMaps.get('ratchet-nats-accounts')!['ratchet-accounts.conf']!,
    );
    nats = spawn(NATS_SERVER, ['-c', path.join(dir, 'nats', 'nats-server.conf')], {
      env: { ...process.env, ...secrets.get('ratchet-nats-passwords')! },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    nats.stdout?.on('data', (b: Buffer) => (natsLog += b.toString()));
    nats.stderr?.on('data', (b: Buffer) => (natsLog += b.toString()));
    await until(
      'nats-server to listen',
      async () => natsLog.includes('Server is ready'),
      15_000,
      async () => natsLog,
    );

    for (const d of objects.filter((o) => o.kind === 'Deployment' && o.metadata.name.startsWith('ratchet-')))
      ports[d.metadata.name] = await freePort();
    played = playable(objects, { image, ports, databaseUrl: db.url, nats: `127.0.0.1:${natsPort}` });
    playFile = path.join(dir, 'dev.yaml');
    writeFileSync(playFile, toYaml(played));
    await cli(bin, ['kube', 'down', playFile]).catch(() => undefined);
  }, 20 * 60_000);

  afterAll(async () => {
    if (playFile) await cli(bin, ['kube', 'down', playFile], 120_000).catch(() => undefined);
    nats?.kill('SIGTERM');
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const podLogs = async () => {
    const names = (await cli(bin, ['ps', '-a', '--format', '{{.Names}}']))
      .split('\n')
      .filter((n) => n.startsWith('ratchet-'));
    const logs = await Promise.all(
      names.map(async (n) => `--- ${n}\n${await cli(bin, ['logs', '--tail', '30', n]).catch((e: Error) => e.message)}`),
    );
    return `${logs.join('\n')}\n--- nats-server\n${natsLog.split('\n').slice(-30).join('\n')}`;
  };

  it(
    'brings up every Ratchet Deployment, their probes pass, and a run completes through the gateway',
    async () => {
      const deployments = played.filter((o) => o.kind === 'Deployment');
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
        'ratchet-approvals',
        'ratchet-gateway',
        'ratchet-memory',
        'ratchet-orchestrator',
        'ratchet-tool-executor',
      ]);
      await cli(bin, ['kube', 'play', playFile], 5 * 60_000);

      // What the kubelet would ask: each probe of each Deployment, on the port its pod listens on.
      for (const d of deployments) {
        const probes = probeUrls(d, ports[d.metadata.name]!);
        expect([d.metadata.name, probes.map((p) => p.kind).sort()]).toEqual([
          d.metadata.name,
          ['livenessProbe', 'readinessProbe', 'startupProbe'],
        ]);
        for (const p of probes)
          await until(
            `${d.metadata.name} ${p.kind} (${p.url})`,
            async () => (await fetch(p.url)).status === 200,
            120_000,
            podLogs,
          );
      }

      // A run through the gateway with the overlay's bootstrap key, the demo agent from the agents ConfigMap.
      const key = bootstrapKey;
      const gateway = `http://127.0.0.1:${ports['ratchet-gateway']}`;
      const res = await fetch(`${gateway}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'demo', input: 'What is the weather in Oslo and in Bergen?' }),
      });
      expect([res.status, res.status === 202 ? '' : await res.text()]).toEqual([202, '']);
      const { runId } = (await res.json()) as { runId: string };
      let run: { status?: string; output?: unknown } = {};
      await until(
        'the run to complete',
        async () => {
          run = (await (
            await fetch(`${gateway}/v1/runs/${runId}`, { headers: { authorization: `Bearer ${key}` } })
          ).json()) as typeof run;
          return run.status === 'completed' || run.status === 'failed';
        },
        90_000,
        async () => `${JSON.stringify(run)}\n${await podLogs()}`,
      );
      expect(run.status).toBe('completed');
      // No service was refused a subject by the deployment's NATS permissions.
      expect(natsLog).not.toMatch(/Permissions Violation/);
    },
    10 * 60_000,
  );
});
