import { RequestStrategy, type NatsConnection } from 'nats';
import { parseToolServiceSubject, REMOTE_TOOL_HEADERS } from '@ratchet/contracts';
import type { DynamicToolSource, OfferedTool, ToolProblem } from './catalog';
import {
  describedRemoteTool,
  parseRemoteDescription,
  RemoteDescriptionError,
  type RemoteToolTransport,
} from './remote';
import type { ToolLogger } from './tool';
import { discoveryRound, type DiscoveredEndpoint } from './discovery-state';

export interface RemoteDiscoveryOptions {
  prefix: string;
  /** How often the executor asks `$SRV.INFO` who is there. */
  intervalMs: number;
  /** How long one round waits for answers (it ends early once answers stop coming). */
  maxWaitMs?: number;
  /** How long a describe waits for its answer. */
  describeTimeoutMs?: number;
  /** A miss right after a round does not start another within this time (default 250 ms). */
  minRoundGapMs?: number;
}

/**
 * Remote tool services found through NATS service discovery (ADR 0016): every round asks `$SRV.INFO`
 * (the protocol of NATS micro services, spoken by nats.js, nats.go, nats.py and others), keeps the
 * endpoints on a tool subject of this prefix — `<prefix>.toolsvc.<tool>` (every tenant) or
 * `<prefix>.tenants.<tenant>.toolsvc.<tool>` (that tenant only) — and asks each one to describe its
 * tool *on its own subject* (`Ratchet-Op: describe`). Only a subscriber NATS permits on that subject
 * can answer, so whoever may answer discovery cannot put a tool into another tenant's catalog. A tool
 * leaves the catalog when its subject was missing from two rounds in a row.
 */
export class RemoteToolDiscovery implements DynamicToolSource {
  readonly id = 'remote';
  private endpoints = new Map<string, DiscoveredEndpoint>();
  private round: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastRoundAt = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly transport: RemoteToolTransport,
    private readonly logger: ToolLogger,
    private readonly options: RemoteDiscoveryOptions,
  ) {}

  offered(): readonly OfferedTool[] {
    return [...this.endpoints.values()].flatMap((e) => (e.offered ? [e.offered] : []));
  }

  problems(): readonly ToolProblem[] {
    return [...this.endpoints.values()].flatMap((e) => (e.problem ? [e.problem] : []));
  }

  async start(): Promise<void> {
    await this.refresh();
    const tick = () => {
      this.timer = setTimeout(() => void this.refresh().finally(tick), this.options.intervalMs);
      this.timer.unref();
    };
    tick();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  /** A round now (one at a time; a miss right after a round does not start another). */
  refresh(): Promise<void> {
    if (this.round) return this.round;
    if (Date.now() - this.lastRoundAt < (this.options.minRoundGapMs ?? 250)) return Promise.resolve();
    this.round = this.discover()
      .catch((error: unknown) => this.logger.warn('remote tool discovery failed', { error: String(error) }))
      .finally(() => {
        this.round = undefined;
        this.lastRoundAt = Date.now();
      });
    return this.round;
  }

  private async discover(): Promise<void> {
    const seen: { subject: string; tool: string; tenant?: string }[] = [];
    const client = this.nc.services.client({
      strategy: RequestStrategy.JitterTimer,
      maxWait: this.options.maxWaitMs ?? 2_000,
      jitter: 300,
    });
    try {
      for await (const info of await client.info()) {
        for (const endpoint of info.endpoints ?? []) {
          const parsed = parseToolServiceSubject(this.options.prefix, endpoint.subject);
          if (parsed) seen.push({ subject: endpoint.subject, ...parsed });
        }
      }
    } catch (error) {
      // No responders (503): no service is running now — which is an answer, not a failure: the tools of
      // services that were there are gone.
      if ((error as { code?: unknown }).code !== '503') throw error;
    }
    const { next, describe, gone } = discoveryRound(this.endpoints, seen);
    await Promise.all(describe.map((subject) => this.describe(next.get(subject)!)));
    for (const subject of gone)
      this.logger.info('remote tool gone', { subject, tool: this.endpoints.get(subject)?.tool });
    this.endpoints = next;
  }

  private async describe(endpoint: DiscoveredEndpoint): Promise<void> {
    const answer = await this.transport.request(
      endpoint.subject,
      '{}',
      { [REMOTE_TOOL_HEADERS.op]: 'describe' },
      this.options.describeTimeoutMs ?? 2_000,
    );
    if (!answer.ok) {
      // Listed but not answering on its subject (yet): keep what it said before, if anything.
      if (!endpoint.offered)
        endpoint.problem = this.problem(endpoint, 'remote.no_description', `no describe answer: ${answer.message}`);
      return;
    }
    if (answer.data === endpoint.digest) return;
    try {
      const raw = JSON.parse(answer.data) as unknown;
      const description = parseRemoteDescription(endpoint.subject, endpoint.tool, raw);
      const tool = describedRemoteTool(description, endpoint.subject, this.transport);
      endpoint.offered = { tool, tenant: endpoint.tenant };
      endpoint.problem = undefined;
      if (endpoint.digest === undefined)
        this.logger.info('remote tool found', { subject: endpoint.subject, tool: tool.name, kind: tool.kind });
    } catch (error) {
      const code = error instanceof RemoteDescriptionError ? error.code : 'remote.bad_description';
      const message =
        error instanceof SyntaxError
          ? `${endpoint.subject}: the describe answer is not JSON`
          : (error as Error).message;
      // A description that is no longer acceptable withdraws the tool: the model must not see a schema we cannot check.
      endpoint.offered = undefined;
      endpoint.problem = this.problem(endpoint, code, message);
      this.logger.warn('remote tool withheld', { subject: endpoint.subject, code, message });
    }
    endpoint.digest = answer.data;
  }

  private problem(endpoint: DiscoveredEndpoint, code: string, message: string): ToolProblem {
    return { source: `remote:${endpoint.subject}`, tool: endpoint.tool, tenant: endpoint.tenant, code, message };
  }
}
