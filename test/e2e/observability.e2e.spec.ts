import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

interface CollectedSpan {
  service: string;
  traceId: string;
  name: string;
  attributes: Record<string, unknown>;
  raw: string;
}

/** An OTLP/HTTP (JSON) receiver in the test process: what the services export, exactly. */
class OtlpReceiver {
  readonly spans: CollectedSpan[] = [];
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
        scopeSpans?: Array<{ spans?: Array<{ traceId: string; name: string; attributes?: Attr[] }> }>;
      }>;
    };
    for (const rs of doc.resourceSpans ?? []) {
      const service = String(value(rs.resource?.attributes, 'service.name') ?? '');
      for (const ss of rs.scopeSpans ?? []) {
        for (const span of ss.spans ?? []) {
          const attributes = Object.fromEntries((span.attributes ?? []).map((a) => [a.key, unwrap(a.value)]));
          this.spans.push({ service, traceId: span.traceId, name: span.name, attributes, raw: JSON.stringify(span) });
        }
      }
    }
  }

  async stop(): Promise<void> {
    await new Promise((r) => this.server?.close(r));
  }
}
type Attr = { key: string; value: Record<string, unknown> };
const unwrap = (v: Record<string, unknown>) => v['stringValue'] ?? v['boolValue'] ?? v['intValue'] ?? v['doubleValue'];
const value = (attrs: Attr[] | undefined, key: string) => unwrap(attrs?.find((a) => a.key === key)?.value ?? {});

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
      RATCHET_FAILPOINTS: 'tools.after-effect@1',
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
    expect((await doomedExecutor.exited).signal).toBe('SIGKILL'); // died right after its first effect
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
    expect(model?.attributes).toMatchObject({ 'gen_ai.system': 'scripted', 'gen_ai.request.model': 'scripted' });

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
