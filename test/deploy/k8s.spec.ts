import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { z } from 'zod';
import { CONSUMER_NAMES, declareTopology } from '@ratchet/adapters';
import { approvalsSubjects, memorySubject, subjects, threadsSubject } from '@ratchet/contracts';
import { workerConfigSchema } from '@ratchet/platform';
// The apps' own config schemas are what the manifests must satisfy; no library exports them.
/* eslint-disable import/no-relative-packages */
import { gatewayConfigSchema } from '../../apps/gateway/src/gateway.config';
import { orchestratorConfigSchema } from '../../apps/orchestrator/src/orchestrator.config';
import { housekeepingFromConfig } from '../../apps/orchestrator/src/housekeeping/housekeeping.config';
import { toolExecutorConfigSchema } from '../../apps/tool-executor/src/tool-executor.config';
import { memoryConfigSchema } from '../../apps/memory/src/memory.config';
import { cliConfigSchema, parseRetentionPolicy } from '@ratchet/operator';
/* eslint-enable import/no-relative-packages */
import { accountUsers, parseNatsConf, type NatsUser } from './nats-conf';

/**
 * The Kubernetes manifests, rendered exactly as an operator renders them (`kubectl kustomize`), checked
 * against the Kubernetes schemas and against what the services need: every variable their zod config
 * declares, probes on the ports they listen on, a grace period longer than their shutdown, and NATS
 * users whose permissions match docs/deploy.md.
 */
const ROOT = path.resolve(__dirname, '../..');
const SERVICES = ['gateway', 'orchestrator', 'tool-executor', 'approvals', 'memory'] as const;
type Service = (typeof SERVICES)[number];

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
} & Record<
  string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  any
>;

/** Each service's config schema. approvals declares its schema inline in main.ts: the base plus HEALTH_PORT,
 *  which is workerConfigSchema. */
const SCHEMAS: Record<Service | 'cli', z.ZodPipe<z.ZodObject, z.ZodTransform>> = {
  gateway: gatewayConfigSchema as never,
  orchestrator: orchestratorConfigSchema as never,
  'tool-executor': toolExecutorConfigSchema as never,
  approvals: workerConfigSchema as never,
  memory: memoryConfigSchema as never,
  cli: cliConfigSchema as never,
};

function declared(service: Service | 'cli'): string[] {
  return Object.keys(SCHEMAS[service].in.shape);
}

/** A variable without a default that is not optional: the service refuses to start without it. */
function required(service: Service | 'cli'): string[] {
  const shape = SCHEMAS[service].in.shape as Record<string, z.ZodType>;
  return Object.entries(shape)
    .filter(([, field]) => !field.safeParse(undefined).success)
    .map(([k]) => k);
}

function kubectl(args: string[]): string {
  const res = spawnSync('kubectl', args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (res.error) throw new Error(`kubectl is needed for these tests: ${res.error.message}`);
  if (res.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed:\n${res.stderr}`);
  return res.stdout;
}

function render(overlay: 'dev' | 'prod'): Obj[] {
  const docs = parseAllDocuments(kubectl(['kustomize', `deploy/k8s/overlays/${overlay}`]));
  return docs.map((d) => d.toJS() as Obj).filter((o) => o !== null);
}

function validate(objects: Obj[]): (string | null)[] {
  const res = spawnSync(process.execPath, [path.join(__dirname, 'validate-k8s.mjs')], {
    cwd: ROOT,
    input: JSON.stringify(objects),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.status !== 0) throw new Error(`validate-k8s.mjs failed:\n${res.stderr}`);
  return JSON.parse(res.stdout) as (string | null)[];
}

const of = (objects: Obj[], kind: string) => objects.filter((o) => o.kind === kind);
const named = (objects: Obj[], kind: string, name: string): Obj => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the render`);
  return found;
};
const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);
const container = (d: Obj) => d['spec'].template.spec.containers[0];

/** Names every source of variables: literal env, fieldRef, secretKeyRef, and the keys of envFrom ConfigMaps. */
function providedEnv(objects: Obj[], podSpec: Obj['spec']): Map<string, string> {
  const c = podSpec.containers[0];
  const out = new Map<string, string>();
  for (const ref of c.envFrom ?? []) {
    if (ref.configMapRef) {
      const cm = named(objects, 'ConfigMap', ref.configMapRef.name);
      for (const key of Object.keys(cm['data'] ?? {})) out.set(key, `configMap:${ref.configMapRef.name}`);
    }
  }
  for (const e of c.env ?? []) {
    const from = e.valueFrom;
    out.set(
      e.name,
      e.value !== undefined
        ? 'value'
        : from?.secretKeyRef
          ? `secret:${from.secretKeyRef.name}/${from.secretKeyRef.key}`
          : from?.fieldRef
            ? `field:${from.fieldRef.fieldPath}`
            : from?.configMapKeyRef
              ? `configMap:${from.configMapKeyRef.name}`
              : 'unknown',
    );
  }
  return out;
}

function configValue(objects: Obj[], podSpec: Obj['spec'], variable: string): string | undefined {
  const c = podSpec.containers[0];
  const literal = (c.env ?? []).find((e: { name: string }) => e.name === variable)?.value;
  if (literal !== undefined) return literal;
  let value: string | undefined;
  for (const ref of c.envFrom ?? []) {
    const data = ref.configMapRef ? named(objects, 'ConfigMap', ref.configMapRef.name)['data'] : undefined;
    if (data?.[variable] !== undefined) value = data[variable];
  }
  return value;
}

const NATS_ACCOUNTS = 'deploy/k8s/base/nats/ratchet-accounts.conf';

describe.each(['dev', 'prod'] as const)('deploy/k8s/overlays/%s', (overlay) => {
  let objects: Obj[];
  beforeAll(() => {
    objects = render(overlay);
  });
  const deployment = (s: Service) => named(objects, 'Deployment', `ratchet-${s}`);

  // dev ships the NATS, Postgres and Jaeger its credentials and OTLP endpoint name; prod brings its own.
  const infra = overlay === 'dev' ? ['jaeger', 'nats', 'postgres'] : [];

  it('renders one Deployment per service, the gateway Service, both Jobs and the network policies', () => {
    expect(
      of(objects, 'Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual([...infra, ...SERVICES.map((s) => `ratchet-${s}`)].sort());
    expect(
      of(objects, 'Service')
        .map((s) => s.metadata.name)
        .sort(),
    ).toEqual([...infra, 'ratchet-gateway'].sort());
    expect(
      of(objects, 'Job')
        .map((j) => j.metadata.name)
        .sort(),
    ).toEqual(['ratchet-migrate', 'ratchet-topology']);
    expect(of(objects, 'NetworkPolicy').length).toBeGreaterThanOrEqual(3);
    expect(objects.every((o) => o.metadata.namespace === (overlay === 'prod' ? 'ratchet' : 'ratchet-dev'))).toBe(true);
  });

  it('every object is valid against the Kubernetes schemas (kubernetes-models)', () => {
    // kustomize wraps long base64 Secret values over lines; the API server's decoder ignores newlines,
    // the schema's `byte` format does not.
    const errors = validate(
      objects.map((o) =>
        o.kind === 'Secret'
          ? {
              ...o,
              data: Object.fromEntries(
                Object.entries(o['data'] ?? {}).map(([k, v]) => [k, String(v).replace(/\s/g, '')]),
              ),
            }
          : o,
      ),
    );
    expect(errors).toHaveLength(objects.length);
    expect(errors.filter((e) => e !== null)).toEqual([]);
  });

  it.each(SERVICES)('%s: every variable its config schema declares is provided, DATABASE_URL from a Secret', (s) => {
    const pod = deployment(s)['spec'].template.spec;
    const provided = providedEnv(objects, pod);
    expect(container(deployment(s)).env.find((e: { name: string }) => e.name === 'SERVICE').value).toBe(s);
    // Required first (a missing one stops the service with exit 78), then everything declared, so an
    // operator finds each setting in a ConfigMap instead of in the source.
    for (const v of required(s)) expect([v, provided.get(v)]).toEqual([v, expect.any(String)]);
    const missing = declared(s).filter((v) => !provided.has(v));
    expect(missing).toEqual([]);
    expect(declared(s).length).toBeGreaterThan(8);
    expect(provided.get('DATABASE_URL')).toMatch(/^secret:ratchet-database/);
    expect(provided.get('NATS_URL')).toMatch(new RegExp(`^secret:ratchet-nats(-[a-z0-9]+)?/${s}$`));
    expect(provided.get('SERVICE_INSTANCE_ID')).toBe('field:metadata.name');
  });

  it.each(SERVICES)('%s: probes on the port it listens on, resources, a locked-down security context', (s) => {
    const d = deployment(s);
    const pod = d['spec'].template.spec;
    const c = container(d);
    const port = Number(configValue(objects, pod, s === 'gateway' ? 'GATEWAY_PORT' : 'HEALTH_PORT'));
    expect(port).toBeGreaterThan(0);
    const portOf = (name: string | number) =>
      typeof name === 'number' ? name : c.ports.find((p: { name: string }) => p.name === name)?.containerPort;
    for (const [probe, pathname] of [
      ['livenessProbe', '/health/live'],
      ['readinessProbe', '/health/ready'],
      ['startupProbe', '/health/live'],
    ] as const) {
      expect([probe, c[probe]?.httpGet?.path]).toEqual([probe, pathname]);
      expect([probe, portOf(c[probe].httpGet.port)]).toEqual([probe, port]);
    }
    for (const kind of ['requests', 'limits'])
      for (const r of ['cpu', 'memory'])
        expect([kind, r, c.resources?.[kind]?.[r]]).toEqual([kind, r, expect.anything()]);

    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(c.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    const tmp = c.volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/tmp');
    expect(pod.volumes.find((v: { name: string }) => v.name === tmp?.name)?.emptyDir).toBeDefined();
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it.each(SERVICES)(
    '%s: the pod outlives its own shutdown (terminationGracePeriodSeconds > SHUTDOWN_GRACE_MS)',
    (s) => {
      const pod = deployment(s)['spec'].template.spec;
      const graceMs = Number(configValue(objects, pod, 'SHUTDOWN_GRACE_MS'));
      expect(graceMs).toBeGreaterThan(0);
      const preStop = container(deployment(s)).lifecycle?.preStop?.exec?.command as string[] | undefined;
      const preStopMs = preStop?.[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
      // start-service.ts forces exit(1) at SHUTDOWN_GRACE_MS + 5 s; Kubernetes must not SIGKILL before that.
      expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopMs + graceMs + 5_000);
    },
  );

  it('the gateway Service reaches the gateway pods on GATEWAY_PORT', () => {
    const svc = named(objects, 'Service', 'ratchet-gateway');
    const d = deployment('gateway');
    expect(matches(svc['spec'].selector, d['spec'].template.metadata.labels)).toBe(true);
    const target = svc['spec'].ports[0].targetPort;
    const port = container(d).ports.find((p: { name: string }) => p.name === target).containerPort;
    expect(port).toBe(Number(configValue(objects, d['spec'].template.spec, 'GATEWAY_PORT')));
  });

  it('the Jobs run `ratchet migrate` (Postgres only, then with the JetStream topology) as the admin NATS user', () => {
    const migrate = named(objects, 'Job', 'ratchet-migrate');
    const topology = named(objects, 'Job', 'ratchet-topology');
    for (const job of [migrate, topology]) {
      const pod = job['spec'].template.spec;
      const provided = providedEnv(objects, pod);
      expect(container(job).env.find((e: { name: string }) => e.name === 'SERVICE').value).toBe('cli');
      for (const v of required('cli')) expect(provided.has(v)).toBe(true);
      for (const v of ['DATABASE_URL', 'NATS_URL', 'RATCHET_SUBJECT_PREFIX', 'RATCHET_STREAM_PREFIX'])
        expect([v, provided.has(v)]).toEqual([v, true]);
      expect(provided.get('NATS_URL')).toMatch(/^secret:ratchet-nats(-[a-z0-9]+)?\/admin$/);
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(container(job).securityContext.readOnlyRootFilesystem).toBe(true);
    }
    expect(container(migrate).args).toEqual(['migrate', '--no-topology']);
    expect(container(topology).args).toEqual(['migrate']);
    // The CLI's options: `--no-topology` must still exist there.
    expect(readFileSync(path.join(ROOT, 'apps/cli/src/commands/migrate.command.ts'), 'utf8')).toContain(
      "'--no-topology'",
    );
  });

  it('network policies: default deny for every Ratchet pod, gateway ingress, egress to DNS, NATS, Postgres, OTLP', () => {
    const policies = of(objects, 'NetworkPolicy');
    const pods = SERVICES.map((s) => deployment(s)['spec'].template.metadata.labels as Record<string, string>);
    const selecting = (labels: Record<string, string>) =>
      policies.filter((p) => matches(p['spec'].podSelector.matchLabels ?? {}, labels));
    const deny = policies.find(
      (p) => !p['spec'].ingress && !p['spec'].egress && p['spec'].policyTypes.join() === 'Ingress,Egress',
    );
    expect(deny).toBeDefined();
    for (const labels of pods) expect(matches(deny!['spec'].podSelector.matchLabels, labels)).toBe(true);

    const ingressTo = (labels: Record<string, string>) =>
      selecting(labels).flatMap((p) => (p['spec'].ingress ?? []) as { ports?: { port: unknown }[] }[]);
    expect(ingressTo(pods[0]!).flatMap((r) => r.ports?.map((p) => p.port))).toEqual(['http']);
    for (const labels of pods.slice(1)) expect(ingressTo(labels)).toEqual([]);

    for (const labels of pods) {
      const egressPorts = selecting(labels)
        .flatMap((p) => (p['spec'].egress ?? []) as { ports?: { port: number; protocol: string }[] }[])
        .flatMap((r) => r.ports ?? [])
        .map((p) => `${p.port}/${p.protocol}`);
      expect(egressPorts).toEqual(expect.arrayContaining(['53/UDP', '53/TCP', '4222/TCP', '5432/TCP', '4318/TCP']));
    }
    const egressOf = (labels: Record<string, string>) =>
      selecting(labels)
        .flatMap((p) => (p['spec'].egress ?? []) as { ports?: { port: number; protocol: string }[] }[])
        .flatMap((r) => r.ports ?? [])
        .map((p) => `${p.port}/${p.protocol}`);
    // The gateway reaches the identity provider's JWKS; the model worker reaches providers and in-cluster
    // model servers (vLLM 8000, Ollama 11434).
    expect(egressOf(pods[0]!)).toContain('443/TCP');
    expect(egressOf(deployment('orchestrator')['spec'].template.metadata.labels)).toEqual(
      expect.arrayContaining(['443/TCP', '8000/TCP', '11434/TCP']),
    );
  });

  it("the orchestrator's shared agents come from the ratchet-agents ConfigMap (the repository's agents/demo.yaml)", () => {
    const d = deployment('orchestrator');
    const cm = of(objects, 'ConfigMap').find((c) => c.metadata.name.startsWith('ratchet-agents'));
    expect(cm?.['data']['demo.yaml']).toBe(readFileSync(path.join(ROOT, 'agents/demo.yaml'), 'utf8'));
    const volume = (d['spec'].template.spec.volumes as { name: string; configMap?: { name: string } }[]).find(
      (v) => v.configMap?.name === cm!.metadata.name,
    );
    const mount = (container(d).volumeMounts as { name: string; mountPath: string }[]).find(
      (m) => m.name === volume?.name,
    );
    const config = named(
      objects,
      'ConfigMap',
      of(objects, 'ConfigMap').find((c) => c.metadata.name.startsWith('ratchet-orchestrator-config'))!.metadata.name,
    );
    expect(mount?.mountPath).toBe(config['data']['AGENTS_DIR']);
  });

  it('retention runs inside the orchestrators (housekeeping), with a policy and a schedule they accept; no CronJob', () => {
    expect(of(objects, 'CronJob')).toEqual([]);
    const config = of(objects, 'ConfigMap').find((c) => c.metadata.name.startsWith('ratchet-orchestrator-config'))!;
    const data = config['data'] as Record<string, string>;
    expect(data['HOUSEKEEPING_ENABLED']).toBe('true');
    expect(() => parseRetentionPolicy(data['RATCHET_RETENTION'])).not.toThrow();
    expect(() =>
      housekeepingFromConfig(
        orchestratorConfigSchema.parse({ ...data, DATABASE_URL: 'postgres://x/y', NATS_URL: 'nats://x:4222' }),
      ),
    ).not.toThrow();
  });

  it('the NATS account ConfigMap is deploy/k8s/base/nats/ratchet-accounts.conf', () => {
    const cm = named(objects, 'ConfigMap', 'ratchet-nats-accounts');
    expect(cm['data']['ratchet-accounts.conf']).toBe(readFileSync(path.join(ROOT, NATS_ACCOUNTS), 'utf8'));
  });

  if (overlay === 'dev') {
    it('dev: the NATS it ships serves the Ratchet account with the dev passwords; Postgres matches DATABASE_URL', () => {
      const nats = named(objects, 'Deployment', 'nats');
      const pod = nats['spec'].template.spec;
      const volumes = pod.volumes as { name: string; configMap?: { name: string } }[];
      expect(volumes.map((v) => v.configMap?.name)).toContain('ratchet-nats-accounts');
      const conf = of(objects, 'ConfigMap').find((c) => c.metadata.name.startsWith('ratchet-dev-nats-config'))!;
      expect(volumes.map((v) => v.configMap?.name)).toContain(conf.metadata.name);
      expect(conf['data']['nats-server.conf']).toContain('include ./accounts/ratchet-accounts.conf');
      expect(pod.containers[0].envFrom).toEqual([{ secretRef: { name: 'ratchet-nats-passwords' } }]);
      const pg = named(objects, 'Deployment', 'postgres')['spec'].template.spec.containers[0];
      const pgEnv = Object.fromEntries((pg.env as { name: string; value: string }[]).map((e) => [e.name, e.value]));
      const url = new URL(
        Buffer.from(
          String(
            of(objects, 'Secret').find((x) => x.metadata.name.startsWith('ratchet-database'))!['data']['DATABASE_URL'],
          ),
          'base64',
        ).toString(),
      );
      expect([url.hostname, url.port, url.username, url.password, url.pathname]).toEqual([
        'postgres',
        '5432',
        pgEnv['POSTGRES_USER'],
        pgEnv['POSTGRES_PASSWORD'],
        `/${pgEnv['POSTGRES_DB']}`,
      ]);
    });
  }

  if (overlay === 'prod') {
    it('prod: an HPA (2+ replicas) that alone owns the replica count and a PDB (minAvailable 1) per service, a pinned image, more resources than dev', () => {
      const dev = render('dev');
      for (const s of SERVICES) {
        const d = deployment(s);
        // A fixed `replicas` would be re-applied over the autoscaler's count on every `kubectl apply`.
        expect([s, d['spec'].replicas]).toEqual([s, undefined]);
        const hpa = of(objects, 'HorizontalPodAutoscaler').find(
          (h) => h['spec'].scaleTargetRef.kind === 'Deployment' && h['spec'].scaleTargetRef.name === d.metadata.name,
        );
        expect(hpa?.['spec'].minReplicas).toBeGreaterThanOrEqual(2);
        expect(hpa?.['spec'].maxReplicas).toBeGreaterThan(hpa?.['spec'].minReplicas);
        const pdbs = of(objects, 'PodDisruptionBudget').filter((p) =>
          matches(p['spec'].selector.matchLabels, d['spec'].template.metadata.labels),
        );
        expect(pdbs.map((p) => p['spec'].minAvailable)).toEqual([1]);
        const image = container(d).image as string;
        expect(image).toMatch(/^[a-z0-9.-]+\/[a-z0-9/._-]+:[0-9][\w.-]*(@sha256:[0-9a-f]{64})?$/);
        expect(image).not.toMatch(/:latest$/);
        const memory = (o: Obj[]) =>
          parseQuantity(container(named(o, 'Deployment', `ratchet-${s}`)).resources.requests.memory);
        expect(memory(objects)).toBeGreaterThan(memory(dev));
      }
      // Production credentials come from the operator's secret manager, never from this repository.
      expect(of(objects, 'Secret')).toEqual([]);
    });
  } else {
    it('dev: one replica each, no PDB that would block a node drain, credentials that match the NATS users', () => {
      for (const s of SERVICES) expect(deployment(s)['spec'].replicas).toBe(1);
      expect(of(objects, 'PodDisruptionBudget')).toEqual([]);
      const users = accountUsers(parseNatsConf(readFileSync(path.join(ROOT, NATS_ACCOUNTS), 'utf8')), 'RATCHET');
      const urls = of(objects, 'Secret').find((x) => x.metadata.name.startsWith('ratchet-nats-') && x['data']['admin']);
      const passwords = named(objects, 'Secret', 'ratchet-nats-passwords');
      const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
      for (const key of [...SERVICES, 'admin']) {
        const url = new URL(decode(urls!['data'][key]));
        const user = users.find((u) => u.user === decodeURIComponent(url.username));
        expect([key, user?.user]).toEqual([key, `ratchet-${key}`]);
        const passwordVar = user!.password.replace(/^\$/, '');
        expect(decode(passwords['data'][passwordVar])).toBe(decodeURIComponent(url.password));
      }
    });
  }
});

function parseQuantity(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|m)?$/.exec(q);
  if (!m) throw new Error(`cannot read quantity ${q}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, m: 1e-3 }[m[2] as 'Ki'] ?? 1;
  return Number(m[1]) * unit;
}

describe('the schema validation can fail', () => {
  it('rejects a Deployment with a string port and an HPA without a target', () => {
    const errors = validate([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'broken' },
        spec: {
          selector: {},
          template: { spec: { containers: [{ name: 'a', image: 'b', ports: [{ containerPort: 'http' }] }] } },
        },
      },
      { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h' }, spec: {} },
    ]);
    expect(errors[0]).toMatch(/containerPort must be integer/);
    expect(errors[1]).toMatch(/scaleTargetRef/);
  });
});

describe('NATS users and permissions', () => {
  const accounts = readFileSync(path.join(ROOT, NATS_ACCOUNTS), 'utf8');
  const users = accountUsers(parseNatsConf(accounts), 'RATCHET');
  const standalone = parseNatsConf(readFileSync(path.join(ROOT, 'deploy/nats/nats-server.conf'), 'utf8'));
  const topology = declareTopology({ subjectPrefix: 'ratchet', streamPrefix: 'RATCHET' });
  const user = (name: string): NatsUser => {
    const u = users.find((x) => x.user === name);
    if (!u) throw new Error(`no NATS user ${name}`);
    return u;
  };

  /** The table in docs/deploy.md: | `user` | JetStream consumers | publish | subscribe | */
  const documented = (() => {
    const doc = readFileSync(path.join(ROOT, 'docs/deploy.md'), 'utf8');
    const rows = doc.split('\n').filter((l) => /^\|\s*`[a-z-]+`\s*\|/.test(l));
    // Back-quoted subjects of a cell; `allow_responses` is a flag, not a subject.
    const cells = (cell: string) =>
      [...cell.matchAll(/`([^`]+)`/g)]
        .map((m) => m[1]!)
        .filter((x) => x !== 'allow_responses')
        .sort();
    return new Map(
      rows.map((row) => {
        const [, name, consumers, publish, subscribe] = row.split('|').map((c) => c.trim());
        return [
          cells(name!)[0]!,
          { consumers: cells(consumers!), publish: cells(publish!), subscribe: cells(subscribe!) },
        ] as const;
      }),
    );
  })();

  it('the standalone example has exactly the same users and permissions as the ConfigMap', () => {
    expect(accountUsers(standalone, 'RATCHET')).toEqual(users);
    expect((standalone['jetstream'] as Record<string, unknown>)['sync_interval']).toBe('always');
  });

  it('docs/deploy.md documents every user, and each user has exactly the permissions the docs say', () => {
    expect([...documented.keys()].sort()).toEqual(users.map((u) => u.user).sort());
    expect(users.length).toBe(7);
    for (const u of users) {
      const doc = documented.get(u.user)!;
      const consumersOf = u.publish
        .map((s) => /^\$JS\.API\.CONSUMER\.MSG\.NEXT\.[^.]+\.([^.]+)$/.exec(s)?.[1])
        .filter((c): c is string => c !== undefined)
        .sort();
      const ownsAll = u.publish.includes('$JS.API.>');
      expect([u.user, ownsAll ? ['$JS.API.>'] : consumersOf]).toEqual([
        u.user,
        doc.consumers.length === 0 ? [] : doc.consumers,
      ]);
      expect([u.user, u.publish.filter((s) => !s.startsWith('$JS.')).sort()]).toEqual([u.user, doc.publish]);
      expect([u.user, u.subscribe.slice().sort()]).toEqual([u.user, doc.subscribe]);
    }
  });

  it('a service touches only its own consumers, each with the full set of subjects it needs', () => {
    const owner: Record<string, string> = {
      'orchestrator-requests': 'ratchet-orchestrator',
      'orchestrator-inbox': 'ratchet-orchestrator',
      'model-worker': 'ratchet-orchestrator',
      'tool-executor': 'ratchet-tool-executor',
      'tool-executor-control': 'ratchet-tool-executor',
      approvals: 'ratchet-approvals',
      'orchestrator-webhooks': 'ratchet-orchestrator',
      'orchestrator-revocations': 'ratchet-orchestrator',
    };
    expect(Object.keys(owner).sort()).toEqual([...CONSUMER_NAMES].sort());
    for (const spec of topology.consumers) {
      const u = user(owner[spec.name]!);
      const base = `${spec.stream}.${spec.name}`;
      for (const s of [
        `$JS.API.CONSUMER.INFO.${base}`,
        `$JS.API.CONSUMER.CREATE.${base}`,
        `$JS.API.CONSUMER.CREATE.${base}.>`,
        `$JS.API.CONSUMER.DURABLE.CREATE.${base}`,
        `$JS.API.CONSUMER.MSG.NEXT.${base}`,
        `$JS.ACK.${base}.>`,
      ])
        expect([u.user, u.publish]).toEqual([u.user, expect.arrayContaining([s])]);
      for (const other of users.filter((x) => x.user !== u.user && x.user !== 'ratchet-admin'))
        expect([other.user, other.publish.filter((s) => s.includes(`.${base}`))]).toEqual([other.user, []]);
    }
    // Every service ensures all streams at start (libs/platform ServiceRuntime / gateway main).
    for (const s of SERVICES)
      for (const stream of topology.streams)
        for (const op of ['INFO', 'CREATE', 'UPDATE'])
          expect(user(`ratchet-${s}`).publish).toContain(`$JS.API.STREAM.${op}.${stream.config.name}`);
  });

  it('no service may publish or subscribe to everything; the external publisher only to its tenant', () => {
    for (const u of users.filter((x) => x.user !== 'ratchet-admin')) {
      for (const s of [...u.publish, ...u.subscribe])
        expect([u.user, s]).not.toEqual([u.user, expect.stringMatching(/^(>|ratchet\.>|\$JS\.API\.>|\$JS\.>)$/)]);
    }
    const publisher = user('acme-publisher');
    expect(publisher.publish).toEqual(['ratchet.requests.acme', 'ratchet.waitpoints.acme.complete']);
    expect(publisher.subscribe).toEqual(['_INBOX.>']);
    expect(publisher.allowResponses).toBe(false);
    expect(user('ratchet-memory').allowResponses).toBe(true);
    expect(user('ratchet-memory').subscribe).toContain('ratchet.memory.*.*');
    for (const u of users) expect(u.password).toMatch(/^\$[A-Z_]+_NATS_PASSWORD$/);
  });

  /** NATS subject matching: `*` is one token, `>` one or more at the end. */
  const matches = (pattern: string, subject: string): boolean => {
    const p = pattern.split('.');
    const t = subject.split('.');
    for (let i = 0; i < p.length; i++) {
      if (p[i] === '>') return t.length > i;
      if (i >= t.length || (p[i] !== '*' && p[i] !== t[i])) return false;
    }
    return p.length === t.length;
  };
  const allowed = (patterns: string[], subject: string) => patterns.some((p) => matches(p, subject));

  it('every subject a service publishes, asks or listens on is allowed to its user (schedules, webhooks, catalogs, queries)', () => {
    const s = subjects('ratchet');
    const a = approvalsSubjects('ratchet');
    const uses: Record<string, { publish: string[]; subscribe: string[]; replies: boolean }> = {
      'ratchet-gateway': {
        publish: [
          s.requests('acme'),
          memorySubject('ratchet', 'acme', 'search'),
          threadsSubject('ratchet', 'acme', 'list'),
          s.agents('acme', 'list'),
          s.deploymentAgents('list'),
          s.tools('acme', 'list'),
          s.schedules('acme', 'create'),
          s.webhooks('acme', 'rotate-secret'),
          a.api,
        ],
        subscribe: ['_INBOX.abc', s.events('acme', 't1'), s.tokens('acme', 't1'), a.principalsCheck],
        replies: true,
      },
      'ratchet-orchestrator': {
        publish: [
          s.requests('acme'),
          s.modelCommands('acme'),
          s.toolCommands('acme'),
          s.approvalCommands('acme'),
          s.controlCommands('acme'),
          s.webhookCommands('acme'),
          s.runStops('acme', 't1'),
          s.events('acme', 't1'),
          s.inbox('acme', 't1'),
          s.tokens('acme', 't1'),
          memorySubject('ratchet', 'acme', 'search'),
          s.tools('acme', 'list'),
          s.deploymentTools('list'),
          a.api,
          a.principalsCheck,
          '_INBOX.abc',
          '$JS.API.STREAM.PURGE.RATCHET_EVENTS',
        ],
        subscribe: [
          '_INBOX.abc',
          s.runStops('acme', 't1'),
          threadsSubject('ratchet', 'acme', 'get'),
          s.agents('acme', 'register'),
          s.deploymentAgents('list'),
          s.schedules('acme', 'list'),
          s.webhooks('acme', 'secret'),
        ],
        replies: false,
      },
      'ratchet-tool-executor': {
        publish: [
          s.inbox('acme', 't1'),
          s.toolService('http.request'),
          s.tenantToolService('acme', 'crm.lookup'),
          '$SRV.INFO',
          memorySubject('ratchet', 'acme', 'put'),
          memorySubject('ratchet', 'acme', 'search'),
        ],
        subscribe: ['_INBOX.abc', s.runStops('acme', 't1'), s.tools('acme', 'list'), s.deploymentTools('list')],
        replies: true,
      },
      'ratchet-approvals': {
        publish: [s.inbox('acme', 't1')],
        subscribe: ['_INBOX.abc', a.api, s.waitpoints('acme', 'complete'), s.runStops('acme', 't1')],
        replies: true,
      },
      'ratchet-memory': {
        publish: [],
        subscribe: ['_INBOX.abc', memorySubject('ratchet', 'acme', 'search')],
        replies: true,
      },
    };
    for (const [name, use] of Object.entries(uses)) {
      const u = user(name);
      expect([name, use.publish.filter((x) => !allowed(u.publish, x))]).toEqual([name, []]);
      expect([name, use.subscribe.filter((x) => !allowed(u.subscribe, x))]).toEqual([name, []]);
      // A responder that may not publish to `_INBOX.>` answers through allow_responses.
      if (use.replies) expect([name, u.allowResponses || allowed(u.publish, '_INBOX.abc')]).toEqual([name, true]);
    }
    // Another tenant's schedules or webhooks are not the gateway's to listen to, nor anyone's but the orchestrator's.
    for (const u of users.filter((x) => !['ratchet-orchestrator', 'ratchet-admin'].includes(x.user)))
      expect([
        u.user,
        allowed(u.subscribe, s.schedules('acme', 'list')) || allowed(u.subscribe, s.webhooks('acme', 'secret')),
      ]).toEqual([u.user, false]);
  });

  const natsServer = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  const version = /v(\d+)\.(\d+)/.exec(natsServer.stdout ?? '');
  (version ? it : it.skip)('nats-server accepts deploy/nats/nats-server.conf (nats-server -t)', () => {
    let conf = readFileSync(path.join(ROOT, 'deploy/nats/nats-server.conf'), 'utf8');
    // `sync_interval` exists from 2.10 on; the machine's server may be older.
    const older = Number(version![1]) === 2 && Number(version![2]) < 10;
    if (older) conf = conf.replace(/^\s*sync_interval: always\s*$/m, '');
    const dir = mkdtempSync(path.join(tmpdir(), 'ratchet-nats-conf-'));
    try {
      writeFileSync(path.join(dir, 'nats-server.conf'), conf);
      const env = Object.fromEntries(users.map((u) => [u.password.slice(1), 'secret']));
      const res = spawnSync('nats-server', ['-t', '-c', path.join(dir, 'nats-server.conf')], {
        encoding: 'utf8',
        env: { ...process.env, ...env },
      });
      expect([res.status, res.stderr]).toEqual([0, expect.stringContaining('is valid')]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
