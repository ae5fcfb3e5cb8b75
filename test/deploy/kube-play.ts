/**
 * The dev overlay's rendered manifests, made runnable by `podman kube play` on a machine without a
 * cluster: what podman runs (the Ratchet Deployments, the ConfigMaps their volumes mount) is kept as
 * rendered — image, command, probes, securityContext, resources, volumes — and only what a cluster
 * would provide is filled in: pods on the host's network (no cluster DNS or Services), so each gets
 * its own port (probes call it; podman maps no container ports on the host's network) and the
 * `nats`/`postgres` hosts point at loopback; Secrets and ConfigMap variables
 * written into `env` (what the kubelet does); the pod name for `fieldRef: metadata.name`.
 */
import { parseAllDocuments, stringify } from 'yaml';

export type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
} & Record<
  string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  any
>;

export function parseManifests(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => d.toJSON() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

export interface PlayTarget {
  image: string;
  /** Per Deployment name: the port its service listens on (GATEWAY_PORT or HEALTH_PORT). */
  ports: Record<string, number>;
  databaseUrl: string;
  /** host:port of the NATS server standing in for the `nats` Service. */
  nats: string;
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
}

/** The data of ConfigMaps and (decoded) Secrets by name. */
export function dataOf(objects: Obj[]): {
  configMaps: Map<string, Record<string, string>>;
  secrets: Map<string, Record<string, string>>;
} {
  const configMaps = new Map<string, Record<string, string>>();
  const secrets = new Map<string, Record<string, string>>();
  for (const o of objects) {
    if (o.kind === 'ConfigMap') configMaps.set(o.metadata.name, (o['data'] ?? {}) as Record<string, string>);
    if (o.kind === 'Secret')
      secrets.set(
        o.metadata.name,
        Object.fromEntries(
          Object.entries((o['data'] ?? {}) as Record<string, string>).map(([k, v]) => [
            k,
            Buffer.from(v.replace(/\s/g, ''), 'base64').toString(),
          ]),
        ),
      );
  }
  return { configMaps, secrets };
}

/** The Ratchet Deployments (and the ConfigMaps they mount), ready for `podman kube play`. */
export function playable(objects: Obj[], target: PlayTarget): Obj[] {
  const { configMaps, secrets } = dataOf(objects);
  const deployments = objects.filter(
    (o) => o.kind === 'Deployment' && o.metadata.name.startsWith('ratchet-') && o.metadata.name in target.ports,
  );
  const out: Obj[] = objects.filter((o) => o.kind === 'ConfigMap');
  for (const d of deployments) {
    const copy = structuredClone(d);
    const pod = copy['spec'].template.spec;
    pod.hostNetwork = true;
    const port = target.ports[d.metadata.name]!;
    // A Secret mounted as files (the master key file) is played as a ConfigMap of the same data: podman
    // kube play mounts ConfigMaps from the YAML, Secrets only from its own store.
    for (const v of (pod.volumes ?? []) as { name: string; secret?: { secretName: string; defaultMode?: number } }[]) {
      if (!v.secret) continue;
      const data = secrets.get(v.secret.secretName);
      if (!data) throw new Error(`${d.metadata.name}: volume ${v.name} names a missing Secret ${v.secret.secretName}`);
      const name = `${v.secret.secretName}-files`;
      if (!out.some((o) => o.kind === 'ConfigMap' && o.metadata.name === name)) {
        out.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data } as unknown as Obj);
      }
      Object.assign(v, { configMap: { name, defaultMode: 0o444 } });
      delete v.secret;
    }
    for (const c of pod.containers as Record<string, unknown>[]) {
      const env = new Map<string, string>();
      for (const from of (c['envFrom'] ?? []) as {
        configMapRef?: { name: string; optional?: boolean };
        secretRef?: { name: string; optional?: boolean };
      }[]) {
        const source = from.configMapRef
          ? configMaps.get(from.configMapRef.name)
          : from.secretRef
            ? secrets.get(from.secretRef.name)
            : undefined;
        const optional = from.configMapRef?.optional ?? from.secretRef?.optional ?? false;
        if (!source && !optional)
          throw new Error(`${d.metadata.name}: envFrom names a missing ${JSON.stringify(from)}`);
        for (const [k, v] of Object.entries(source ?? {})) env.set(k, v);
      }
      for (const e of (c['env'] ?? []) as EnvVar[]) {
        const ref = e.valueFrom?.secretKeyRef ?? e.valueFrom?.configMapKeyRef;
        if (ref) {
          const value = (e.valueFrom?.secretKeyRef ? secrets : configMaps).get(ref.name)?.[ref.key];
          if (value === undefined && !ref.optional)
            throw new Error(`${d.metadata.name}: ${e.name} names a missing ${ref.name}/${ref.key}`);
          if (value !== undefined) env.set(e.name, value);
        } else if (e.valueFrom?.fieldRef) {
          if (e.valueFrom.fieldRef.fieldPath !== 'metadata.name')
            throw new Error(`unsupported fieldRef ${e.valueFrom.fieldRef.fieldPath}`);
          env.set(e.name, `${d.metadata.name}-0`);
        } else {
          env.set(e.name, e.value ?? '');
        }
      }
      // What a cluster's Services and DNS would have given: loopback addresses and a port each.
      env.set('DATABASE_URL', target.databaseUrl);
      const nats = env.get('NATS_URL');
      if (nats) env.set('NATS_URL', nats.replace('@nats:4222', `@${target.nats}`));
      if (env.has('GATEWAY_PORT')) env.set('GATEWAY_PORT', String(port));
      else env.set('HEALTH_PORT', String(port));
      env.delete('OTEL_EXPORTER_OTLP_ENDPOINT'); // no collector here
      delete c['envFrom'];
      c['env'] = [...env].map(([name, value]) => ({ name, value }));
      c['image'] = target.image;
      c['imagePullPolicy'] = 'Never';
      // On the host's network podman refuses port mappings: the named ports go, and the probes that
      // name one call the port the service listens on.
      const named = new Set(((c['ports'] ?? []) as { name?: string }[]).map((p) => p.name));
      delete c['ports'];
      for (const k of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        const get = (c[k] as { httpGet?: { port: string | number } } | undefined)?.httpGet;
        if (get && (typeof get.port === 'number' || named.has(get.port))) get.port = port;
      }
    }
    out.push(copy);
  }
  return out;
}

export function toYaml(objects: Obj[]): string {
  return objects.map((o) => stringify(o)).join('---\n');
}

/** Every probe of a Deployment's first container, as the URL a kubelet would call on this host. */
export function probeUrls(d: Obj, port: number): { kind: string; url: string }[] {
  const c = d['spec'].template.spec.containers[0];
  return (['startupProbe', 'livenessProbe', 'readinessProbe'] as const)
    .filter((k) => c[k]?.httpGet)
    .map((k) => ({ kind: k, url: `http://127.0.0.1:${port}${c[k].httpGet.path as string}` }));
}
