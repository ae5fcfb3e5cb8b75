import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from 'nats';
import { freePort } from '@ratchet/testing';

export const NATS_SERVER_BIN = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server';

/** One nats-server of the cluster: a real process with its own JetStream store in a temp dir. */
class ClusterNode {
  private child: ChildProcess | undefined;
  private output = '';
  constructor(
    readonly name: string,
    readonly clientPort: number,
    readonly routePort: number,
    readonly storeDir: string,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.clientPort}`;
  }

  get logs(): string {
    return this.output;
  }

  start(routes: string[], clusterName: string): void {
    const child = spawn(
      NATS_SERVER_BIN,
      [
        '-a',
        '127.0.0.1',
        '-p',
        String(this.clientPort),
        '-n',
        this.name,
        '-js',
        '-sd',
        this.storeDir,
        '--cluster_name',
        clusterName,
        '--cluster',
        `nats://127.0.0.1:${this.routePort}`,
        '--routes',
        routes.join(','),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (b: Buffer) => (this.output += b.toString()));
    child.stderr?.on('data', (b: Buffer) => (this.output += b.toString()));
    this.child = child;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}

/**
 * A 3-node JetStream cluster on loopback (cluster routes between the nodes), as a deployment runs one.
 * Nodes can be SIGKILLed and brought back on the same ports with their stores intact.
 */
export class NatsCluster {
  private constructor(
    readonly nodes: ClusterNode[],
    private readonly root: string,
    private readonly clusterName: string,
  ) {}

  static async start(size = 3): Promise<NatsCluster> {
    const root = mkdtempSync(path.join(tmpdir(), 'ratchet-nats-cluster-'));
    const nodes: ClusterNode[] = [];
    for (let i = 1; i <= size; i++) {
      nodes.push(new ClusterNode(`n${i}`, await freePort(), await freePort(), path.join(root, `n${i}`)));
    }
    const cluster = new NatsCluster(nodes, root, `ratchet-${path.basename(root)}`);
    for (const node of nodes) cluster.startNode(node);
    await cluster.waitJetStream();
    return cluster;
  }

  /** Every client URL, comma-separated, as NATS_URL takes it. */
  get url(): string {
    return this.nodes.map((n) => n.url).join(',');
  }

  node(name: string): ClusterNode {
    const node = this.nodes.find((n) => n.name === name);
    if (!node) throw new Error(`no cluster node named ${name}`);
    return node;
  }

  private startNode(node: ClusterNode): void {
    node.start(
      this.nodes.filter((n) => n !== node).map((n) => `nats://127.0.0.1:${n.routePort}`),
      this.clusterName,
    );
  }

  async restart(name: string): Promise<void> {
    const node = this.node(name);
    await node.kill();
    this.startNode(node);
    await this.waitJetStream();
  }

  /** Until JetStream answers through every running node (the cluster has a meta leader). */
  async waitJetStream(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const node of this.nodes.filter((n) => n.running)) {
      for (;;) {
        try {
          const nc = await connect({ servers: node.url, timeout: 1_000, reconnect: false });
          try {
            const jsm = await nc.jetstreamManager({ timeout: 2_000 });
            await jsm.getAccountInfo();
            break;
          } finally {
            await nc.close();
          }
        } catch (error) {
          if (Date.now() > deadline)
            throw new Error(`JetStream did not answer through ${node.name}: ${String(error)}\n${node.logs}`);
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill()));
    rmSync(this.root, { recursive: true, force: true });
  }
}
