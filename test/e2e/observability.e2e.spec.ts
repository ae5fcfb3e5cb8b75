import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import type { ApprovalsReply } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  name: string;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string; attributes: Record<string, unknown> }>;
  startNs: bigint;
  endNs: bigint;
  raw: string;
}

interface MetricPoint {
  service: string;
  name: string;
  attributes: Record<string, unknown>;
  value: number;
}

/** An OTLP/HTTP (JSON) receiver in the test process: what the services export, exactly. */
class OtlpReceiver {
  readonly spans: CollectedSpan[] = [];
  readonly metrics: MetricPoint[] = [];
  readonly bodies: string[] = [];
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        this.bodies.push(body);
        if (req.url === '/v1/traces') this.collect(body);
        if (req.url === '/v1/metrics') this.collectMetrics(body);
        res.setHeader('content-type', 'application/json');
        res.end('{}');
      });
    });
    await new Promise<void>((r) => this.server?.listen(0, '127.0.0.1', r));
    this.port = (this.server?.address() as { port: number }).port;
  }

  private collect(body: string): void {
    const doc = JSON.parse(body) as {
      resourceSpans?: Array<{
        resource?: { attributes?: Attr[] };
        scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
      }>;
    };
    for (const rs of doc.resourceSpans ?? []) {
      const service = String(value(rs.resource?.attributes, 'service.name') ?? '');
      for (const ss of rs.scopeSpans ?? []) {
        for (const span of ss.spans ?? []) {
          this.spans.push({
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            name: span.name,
            attributes: attributesOf(span.attributes),
            links: (span.links ?? []).map((l) => ({
              traceId: l.traceId,
              spanId: l.spanId,
              attributes: attributesOf(l.attributes),
            })),
            startNs: BigInt(span.startTimeUnixNano),
            endNs: BigInt(span.endTimeUnixNano),
            raw: JSON.stringify(span),
          });
        }
      }
    }
  }

  private collectMetrics(body: string): void {
    const doc = JSON.parse(body) as {
      resourceMetrics?: Array<{
        resource?: { attributes?: Attr[] };
        scopeMetrics?: Array<{
          metrics?: Array<{ name: string; gauge?: { dataPoints?: Array<Record<string, unknown>> } }>;
        }>;
      }>;
    };
    for (const rm of doc.resourceMetrics ?? []) {
      const service = String(value(rm.resource?.attributes, 'service.name') ?? '');
      for (const sm of rm.scopeMetrics ?? []) {
        for (const m of sm.metrics ?? []) {
          for (const p of m.gauge?.dataPoints ?? []) {
            this.metrics.push({
              service,
              name: m.name,
              attributes: attributesOf(p['attributes'] as Attr[] | undefined),
              value: Number(p['asInt'] ?? p['asDouble']),
            });
          }
        }
      }
    }
  }

  /** Polls what was exported until `found` returns something (services export in batches). */
  async waitFor<T>(what: string, found: () => T | undefined, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = found();
      if (hit !== undefined) return hit;
      if (Date.now() > deadline) throw new Error(`not exported within ${timeoutMs} ms: ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async stop(): Promise<void> {
    await new Promise((r) => this.server?.close(r));
  }
}
type Attr = { key: string; value: Record<string, unknown> };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  name: string;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: Attr[];
  links?: Array<{ traceId: string; spanId: string; attributes?: Attr[] }>;
};
const attributesOf = (attrs: Attr[] | undefined) =>
  Object.fromEntries((attrs ?? []).map((a) => [a.key, unwrap(a.value)]));
const unwrap = (v: Record<string, unknown>) => v['stringValue'] ?? v['boolValue'] ?? v['intValue'] ?? v['doubleValue'];
const value = (attrs: Attr[] | undefined, key: string) => unwrap(attrs?.find((a) => a.key === key)?.value ?? {});

const spanIdOf = (traceparent: string | undefined) => traceparent?.split('-')[2];

const CANARY = 'sk-live-CANARY7f3a9e0123456789abcd';
const PROMPT = 'What is the weather in Oslo and Rome? Tell me about purple elephants';

describe('one trace per run, across services, crashes and resumes', () => {
  let stack: TestStack;
  const otlp = new OtlpReceiver();
  beforeAll(async () => {
    await otlp.start();
    stack = await TestStack.create();
  });
  afterAll(async () => {
    await stack.stop();
    await otlp.stop();
  });

  it('SIGKILLed orchestrator and executor: every service’s spans under the run’s trace, resume marked, no prompt or secret leaked', async () => {
    const telemetry = {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlp.port}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_METRIC_EXPORT_INTERVAL: '1000',
      LOG_LEVEL: 'debug',
      AGENTS_DIR: path.resolve(__dirname, '../agents/loop'),
    };
    // Dies inside its first model call (a real SIGKILL at that line), so the call is made again.
    const orchestrator = await stack.start('orchestrator', {
      ...telemetry,
      RATCHET_FAILPOINTS: 'orchestrator.model-call@1',
    });
    const doomedExecutor = await stack.start('tool-executor', {
      ...telemetry,
      // After its first outcome is committed and before it is published or acked: the redelivered call
      // finds it in the ledger. (A `pure` call killed before its outcome leaves no claim to link to.)
      RATCHET_FAILPOINTS: 'tools.after-outcome@1',
    });
    await stack.publishRequest('acme', {
      requestId: 'traced',
      agent: 'slow',
      input: [{ role: 'user', content: `${PROMPT} my key is ${CANARY}` }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    const threadId = threadIdFor('acme', 'traced');
    const runId = runIdFor('acme', 'traced');
    expect((await orchestrator.exited).signal).toBe('SIGKILL');
    const orchestrator2 = await stack.start('orchestrator', telemetry);
    expect((await doomedExecutor.exited).signal).toBe('SIGKILL'); // died right after its first outcome
    const executor2 = await stack.start('tool-executor', telemetry);
    const events = await stack.waitFor('acme', threadId, terminal(runId), 60_000);
    expect(events.at(-1)?.type).toBe('run.completed');

    // Every event of the run names the same trace.
    const traceIds = new Set(events.map((e) => e.trace?.traceparent.split('-')[1]));
    expect(traceIds.size).toBe(1);
    const traceId = [...traceIds][0] ?? '';
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    // Let the survivors flush their batches, then read what reached the collector.
    await new Promise((r) => setTimeout(r, 1500));
    const inTrace = otlp.spans.filter((s) => s.traceId === traceId);
    expect(new Set(inTrace.map((s) => s.service))).toEqual(new Set(['ratchet-orchestrator', 'ratchet-tool-executor']));
    const names = new Set(inTrace.map((s) => s.name));
    expect([...names]).toEqual(
      expect.arrayContaining([
        'thread.append',
        'chat scripted',
        'execute_tool demo.weather',
        'consume orchestrator-inbox',
      ]),
    );
    // The recovery is visible: redelivered work is marked as a resume with its redelivery count.
    expect(
      inTrace.some(
        (s) => s.attributes['ratchet.resume'] === true && Number(s.attributes['ratchet.redelivery_count']) > 0,
      ),
    ).toBe(true);
    const model = inTrace.find((s) => s.name === 'chat scripted');
    expect(model?.attributes).toMatchObject({
      'gen_ai.provider.name': 'ratchet.scripted',
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'scripted',
    });
    const tool = inTrace.find((s) => s.name === 'execute_tool demo.weather');
    expect(tool?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'demo.weather',
      'gen_ai.tool.call.id': expect.any(String),
    });

    // A model call's next attempt links to the attempt it replaces: the span that requested the one
    // before (its context is stored on that model.requested event; the span itself died unexported).
    // The first orchestrator died inside its call, so step 1 has exactly two attempts.
    const attempts = new Map<number, string | undefined>();
    for (const e of events)
      if (e.type === 'model.requested' && e.data.step === 1) attempts.set(e.data.attempt, e.trace?.traceparent);
    expect([...attempts.keys()]).toEqual([1, 2]);
    const replacedLink = (s: CollectedSpan) =>
      s.links.find((l) => l.attributes['ratchet.link.reason'] === 'replaced_attempt');
    const attempt = 2;
    const retry = await otlp.waitFor(`thread.append of model attempt ${attempt}, with its link`, () =>
      inTraceOf(otlp, traceId).find(
        (s) => s.name === 'thread.append' && Number(replacedLink(s)?.attributes['ratchet.attempt']) === attempt - 1,
      ),
    );
    expect(String(retry.attributes['ratchet.event.types'])).toContain('model.requested');
    expect(replacedLink(retry)).toMatchObject({ traceId, spanId: spanIdOf(attempts.get(attempt - 1)) });

    // The whole run is one `invoke_agent` span, recorded when its end was committed (no process lived
    // through it): from run.started to run.completed, in the run's trace.
    const whole = await otlp.waitFor("the run's invoke_agent span", () =>
      inTraceOf(otlp, traceId).find((s) => s.name === 'invoke_agent slow'),
    );
    expect(whole.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'slow',
      'gen_ai.conversation.id': threadId,
      'ratchet.run': runId,
      'ratchet.outcome': 'completed',
    });
    const at = (type: string) => BigInt(Date.parse(events.find((e) => e.type === type)!.at)) * 1_000_000n;
    expect([whole.startNs, whole.endNs]).toEqual([at('run.started'), at('run.completed')]);

    // The executor's attempt after the crash links to the attempt that claimed the effect in the ledger.
    const afterCrash = await otlp.waitFor('execute_tool after the crash, with its ledger link', () =>
      inTraceOf(otlp, traceId).find(
        (s) =>
          s.name === 'execute_tool demo.weather' &&
          s.attributes['ratchet.ledger.decision'] !== undefined &&
          s.links.some((l) => l.attributes['ratchet.link.reason'] === 'ledger_claim'),
      ),
    );
    expect(['retried', 'dedup', 'reconciled', 'escalated']).toContain(afterCrash.attributes['ratchet.ledger.decision']);
    const claim = afterCrash.links.find((l) => l.attributes['ratchet.link.reason'] === 'ledger_claim');
    expect(claim?.traceId).toBe(traceId);
    expect(claim?.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(claim?.spanId).not.toBe(afterCrash.spanId);

    // Data minimisation with content capture off: no prompt, no secret in any span or log line; the
    // secret never reached the event log either.
    const exported = otlp.bodies.join('\n');
    expect(exported).not.toContain('purple elephants');
    expect(exported).not.toContain('CANARY7f3a9e');
    const logs = [orchestrator, orchestrator2, doomedExecutor, executor2].map((s) => s.logs).join('\n');
    expect(logs).toContain(traceId); // logs name the trace, so an SRE can go from an event to its logs
    expect(logs).not.toContain('purple elephants');
    expect(logs).not.toContain('CANARY7f3a9e');
    const stored = await stack.orchestratorDb.sql.query<{ n: number }>(
      `select count(*)::int as n from ${stack.orchestratorDb.sql.table('thread_events')} where data::text like '%CANARY7f3a9e%'`,
    );
    expect(stored[0]?.n).toBe(0);
  });
});

const inTraceOf = (otlp: OtlpReceiver, traceId: string) => otlp.spans.filter((s) => s.traceId === traceId);

describe('a wait for a human, in the run’s trace and as a gauge', () => {
  let stack: TestStack;
  let nc: NatsConnection;
  const otlp = new OtlpReceiver();
  beforeAll(async () => {
    await otlp.start();
    stack = await TestStack.create();
    nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
  });
  afterAll(async () => {
    await nc?.close();
    await stack.stop();
    await otlp.stop();
  });

  const approvalsApi = async (request: Record<string, unknown>): Promise<ApprovalsReply> => {
    const reply = await nc.request(`${stack.prefix.subject}.approvals.api`, JSON.stringify(request), {
      timeout: 10_000,
    });
    return JSON.parse(new TextDecoder().decode(reply.data)) as ApprovalsReply;
  };

  it('a decided approval is an approval.wait span from request to decision; pending approvals are exported', async () => {
    const telemetry = {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlp.port}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_METRIC_EXPORT_INTERVAL: '500',
      AGENTS_DIR: path.resolve(__dirname, '../agents/approvals'),
    };
    await Promise.all([
      stack.start('orchestrator', telemetry),
      stack.start('tool-executor', telemetry),
      stack.start('approvals', telemetry),
    ]);
    await stack.publishRequest('acme', {
      requestId: 'waits',
      agent: 'pay',
      input: [{ role: 'user', content: 'big car' }],
      principal: { id: 'alice', roles: ['runner'] },
    });
    const threadId = threadIdFor('acme', 'waits');
    const runId = runIdFor('acme', 'waits');
    const requested = await stack.waitFor('acme', threadId, (ev) => ev.some((e) => e.type === 'approval.requested'));
    const approval = requested.find((e) => e.type === 'approval.requested');
    const approvalId = approval?.type === 'approval.requested' ? approval.data.approvalId : '';
    const traceId = approval?.trace?.traceparent.split('-')[1] ?? '';
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    // While it waits, the gauge says so (per tenant).
    await otlp.waitFor('ratchet.approvals.pending = 1 for acme', () =>
      otlp.metrics.find(
        (m) => m.name === 'ratchet.approvals.pending' && m.attributes['tenant'] === 'acme' && m.value === 1,
      ),
    );

    const decided = await approvalsApi({
      op: 'decide',
      tenantId: 'acme',
      principal: { id: 'bob', roles: ['approver'] },
      approvalId,
      decision: 'reject',
      reason: 'not today',
    });
    expect(decided.ok).toBe(true);
    const events = await stack.waitFor('acme', threadId, terminal(runId), 60_000);
    expect(events.at(-1)?.type).toBe('run.completed');
    // The decision continued the run's trace: every event of the run names it.
    expect(new Set(events.map((e) => e.trace?.traceparent.split('-')[1]))).toEqual(new Set([traceId]));

    const wait = await otlp.waitFor('approval.wait in the run’s trace', () =>
      otlp.spans.find((s) => s.name === 'approval.wait' && s.traceId === traceId),
    );
    expect(wait.service).toBe('ratchet-approvals');
    expect(wait.attributes).toMatchObject({
      'ratchet.approval.id': approvalId,
      'ratchet.tool.name': 'demo.effect.charge',
      'ratchet.outcome': 'rejected',
      'ratchet.approval.role': 'approver',
    });
    expect(wait.endNs).toBeGreaterThan(wait.startNs);
    // Never the arguments, never who decided.
    expect(wait.raw).not.toContain('car');
    expect(wait.raw).not.toContain('bob');

    // Decided: the gauge goes back to zero for the tenant.
    await otlp.waitFor('ratchet.approvals.pending = 0 for acme', () =>
      otlp.metrics.find(
        (m) => m.name === 'ratchet.approvals.pending' && m.attributes['tenant'] === 'acme' && m.value === 0,
      ),
    );
  });
});
