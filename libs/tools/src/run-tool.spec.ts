import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { ToolCallCommand } from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';
import {
  createHttpRequestTool,
  defineTool,
  EgressPolicy,
  httpRequest,
  parseRemoteTools,
  toolSpec,
  ToolError,
  AbandonedAttempts,
  type ToolContext,
} from './index';
import { runTool } from './run-tool';

const logger = { info: () => undefined, warn: () => undefined };
const command = (
  tool: string,
  args: ToolCallCommand['args'],
  extra: Partial<ToolCallCommand> = {},
): ToolCallCommand => ({
  kind: 'tool.call',
  commandId: 'c1',
  tenantId: 'acme',
  threadId: 'th-1',
  runId: 'run-1',
  step: 1,
  callId: 'call-1',
  tool,
  args,
  idempotencyKey: 'acme:th-1:run-1:1:call-1',
  principal: { id: 'alice', roles: [] },
  ...extra,
});

describe('runTool', () => {
  it('gives invalid arguments back to the model as a tool error, without running the tool', async () => {
    const execute = jest.fn();
    const tool = defineTool({
      name: 't.v',
      description: '',
      kind: 'pure',
      input: z.object({ n: z.number() }),
      execute,
    });
    const out = await runTool(tool, command('t.v', { n: 'x' }), logger);
    expect(out).toMatchObject({ status: 'failed', error: { code: 'invalid_arguments' } });
    expect(out.status === 'failed' && out.error.message).toContain('n:');
    expect(execute).not.toHaveBeenCalled();
  });

  it('retries transient errors with backoff up to the limit, then fails with a readable reason', async () => {
    let calls = 0;
    const tool = defineTool({
      name: 't.r',
      description: '',
      kind: 'idempotent',
      retry: { attempts: 3, backoffMs: 1 },
      input: z.object({}),
      async execute() {
        calls++;
        throw new ToolError('upstream.503', 'upstream busy', true);
      },
    });
    const out = await runTool(tool, command('t.r', {}), logger);
    expect(calls).toBe(3);
    expect(out).toMatchObject({ status: 'failed', error: { code: 'upstream.503', retryable: false } });
  });

  it('succeeds on a later attempt after a transient error, passing the same key each time', async () => {
    const keys: string[] = [];
    const tool = defineTool({
      name: 't.s',
      description: '',
      kind: 'idempotent',
      retry: { attempts: 3, backoffMs: 1 },
      input: z.object({}),
      async execute(_args, ctx) {
        keys.push(ctx.idempotencyKey);
        if (keys.length < 2) throw new ToolError('x', 'flaky', true);
        return { ok: ctx.attempt };
      },
    });
    expect(await runTool(tool, command('t.s', {}), logger)).toEqual({ status: 'completed', result: { ok: 2 } });
    expect(new Set(keys)).toEqual(new Set(['acme:th-1:run-1:1:call-1']));
  });

  it('does not retry a terminal error', async () => {
    let calls = 0;
    const tool = defineTool({
      name: 't.t',
      description: '',
      kind: 'pure',
      input: z.object({}),
      async execute() {
        calls++;
        throw new ToolError('not_found', 'no such order');
      },
    });
    expect(await runTool(tool, command('t.t', {}), logger)).toMatchObject({
      status: 'failed',
      error: { code: 'not_found', message: 'no such order' },
    });
    expect(calls).toBe(1);
  });

  it('turns a timeout into tool.failed (timeout) and aborts the signal', async () => {
    let signal: AbortSignal | undefined;
    const tool = defineTool({
      name: 't.slow',
      description: '',
      kind: 'idempotent',
      timeoutMs: 20,
      input: z.object({}),
      execute: (_a, ctx) => {
        signal = ctx.signal;
        // A tool that honours its signal: it stops when aborted.
        return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))));
      },
    });
    const out = await runTool(tool, command('t.slow', {}), logger);
    expect(out).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
    expect(signal?.aborted).toBe(true);
  });

  describe('an attempt that ignores its signal', () => {
    /** A tool that ignores its signal and takes `ms`, counting the executions running at once. */
    const stubborn = (kind: 'idempotent' | 'at-most-once', ms: number) => {
      const seen = { running: 0, most: 0, started: 0, finished: 0 };
      const tool = defineTool({
        name: `t.stubborn-${kind}`,
        description: '',
        kind,
        timeoutMs: 20,
        retry: { attempts: 3, backoffMs: 1 },
        input: z.object({}),
        async execute() {
          seen.started++;
          seen.most = Math.max(seen.most, ++seen.running);
          await new Promise((r) => setTimeout(r, ms));
          seen.running--;
          seen.finished++;
          return { ok: true };
        },
      });
      return { tool, seen };
    };

    it('is over only when it settles: the outcome waits for it, within the grace period', async () => {
      const { tool, seen } = stubborn('idempotent', 60);
      const abandoned = new AbandonedAttempts();
      const out = await runTool(tool, command(tool.name, {}), { logger, abortGraceMs: 500, abandoned });
      expect(out).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
      expect(seen).toMatchObject({ started: 1, finished: 1, most: 1 });
      expect(abandoned.size).toBe(0);
    });

    it('is abandoned past the grace period: sent back to the bus, and no attempt of the call starts here until it settles', async () => {
      const { tool, seen } = stubborn('idempotent', 300);
      const abandoned = new AbandonedAttempts();
      const warned: unknown[] = [];
      const counted: string[] = [];
      const services = {
        logger: { info: () => undefined, warn: (...a: unknown[]) => warned.push(a) },
        abortGraceMs: 30,
        abandoned,
        onAbandoned: (name: string) => counted.push(name),
      };
      const key = command(tool.name, {}).idempotencyKey;
      await expect(runTool(tool, command(tool.name, {}), services)).rejects.toMatchObject({
        code: 'tool.abandoned',
        retryAfterMs: 30,
      });
      expect(abandoned.has(key)).toBe(true);
      expect(counted).toEqual([tool.name]);
      expect(JSON.stringify(warned)).toContain(key);
      // A redelivery meanwhile does not start a second attempt.
      await expect(runTool(tool, command(tool.name, {}), services)).rejects.toMatchObject({
        code: 'tool.attempt_running',
      });
      expect(seen).toMatchObject({ started: 1, finished: 0 });
      // Once it settled, a clean attempt may start (and is abandoned in its turn, never overlapping).
      await new Promise((r) => setTimeout(r, 350));
      expect(abandoned.has(key)).toBe(false);
      await expect(runTool(tool, command(tool.name, {}), services)).rejects.toMatchObject({ code: 'tool.abandoned' });
      expect(seen).toMatchObject({ started: 2, most: 1 });
    });

    it('is uncertain when the call is at-most-once, as a timeout always was', async () => {
      const { tool } = stubborn('at-most-once', 300);
      const abandoned = new AbandonedAttempts();
      const out = await runTool(tool, command(tool.name, {}), { logger, abortGraceMs: 30, abandoned });
      expect(out).toMatchObject({ status: 'uncertain' });
      expect(abandoned.size).toBe(1);
    });
  });

  it('makes an at-most-once timeout or maybe-acted failure uncertain, never a retry', async () => {
    let calls = 0;
    const tool = defineTool({
      name: 't.pay',
      description: '',
      kind: 'at-most-once',
      retry: { attempts: 3, backoffMs: 1 },
      input: z.object({}),
      async execute() {
        calls++;
        throw new ToolError('net', 'connection reset', true, { mayHaveActed: true });
      },
    });
    expect(await runTool(tool, command('t.pay', {}), logger)).toMatchObject({ status: 'uncertain' });
    expect(calls).toBe(1);
  });

  it('hands a call back for redelivery when a harness service does not answer (pure, idempotent)', async () => {
    for (const kind of ['pure', 'idempotent'] as const) {
      const tool = defineTool({
        name: `t.${kind}`,
        description: '',
        kind,
        input: z.object({}),
        execute: async () => {
          throw new TransientError('memory: no answer', 'memory.unavailable');
        },
      });
      await expect(runTool(tool, command(`t.${kind}`, {}), logger)).rejects.toBeInstanceOf(TransientError);
    }
    const once = defineTool({
      name: 't.once',
      description: '',
      kind: 'at-most-once',
      input: z.object({}),
      execute: async () => {
        throw new TransientError('memory: no answer', 'memory.unavailable');
      },
    });
    expect(await runTool(once, command('t.once', {}), logger)).toMatchObject({ status: 'uncertain' });
  });

  it('gives the tool a context with tenant, thread, run, principal and the agent config, nothing else', async () => {
    let seen: ToolContext | undefined;
    const tool = defineTool({
      name: 't.ctx',
      description: '',
      kind: 'pure',
      input: z.object({}),
      async execute(_a, ctx) {
        seen = ctx;
        return null;
      },
    });
    await runTool(tool, command('t.ctx', {}, { toolConfig: { allowHosts: ['a.example'] } }), logger);
    expect(Object.keys(seen!).sort()).toEqual(
      [
        'attempt',
        'callId',
        'config',
        'idempotencyKey',
        'logger',
        'memory',
        'now',
        'principal',
        'runId',
        'signal',
        'step',
        'tenantId',
        'threadId',
      ].sort(),
    );
    expect(seen).toMatchObject({ tenantId: 'acme', threadId: 'th-1', step: 1, config: { allowHosts: ['a.example'] } });
  });

  it('a tool that opens a waitpoint answers waiting with it; one that returns no valid waitpoint fails, naming it', async () => {
    const opening = (answer: unknown) =>
      defineTool({
        name: 't.wait',
        description: '',
        kind: 'pure',
        input: z.object({}),
        opensWaitpoint: true,
        execute: async () => answer as never,
      });
    const waitpoint = { id: 'wp_1', expiresAt: '2027-01-01T00:00:00.000Z', onExpiry: 'fail_run' };
    expect(await runTool(opening(waitpoint), command('t.wait', {}), logger)).toEqual({ status: 'waiting', waitpoint });
    expect(await runTool(opening({ id: 'wp_1' }), command('t.wait', {}), logger)).toEqual({
      status: 'failed',
      error: { code: 'invalid_output', message: 't.wait returned no valid waitpoint', retryable: false },
    });
  });
});

describe('toolSpec', () => {
  it('gives the model the JSON Schema of the zod input', () => {
    const spec = toolSpec(httpRequest);
    expect(spec.name).toBe('http.request');
    expect(spec.parameters).toMatchObject({
      type: 'object',
      properties: { url: { type: 'string' } },
      required: ['url'],
    });
  });
});

describe('parseRemoteTools', () => {
  it('reads name:kind[:timeoutMs] and names a bad entry', () => {
    expect(parseRemoteTools('crm.ticket:at-most-once:5000, wx.now:pure')).toEqual([
      { name: 'crm.ticket', kind: 'at-most-once', timeoutMs: 5000 },
      { name: 'wx.now', kind: 'pure' },
    ]);
    expect(() => parseRemoteTools('crm.ticket:sometimes')).toThrow(/crm.ticket:sometimes/);
  });
});

describe('http.request', () => {
  let server: Server;
  let port = 0;
  const seen: { key: string | undefined; method: string | undefined }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ key: req.headers['idempotency-key'] as string | undefined, method: req.method });
      if (req.url === '/big') res.end('x'.repeat(5000));
      else if (req.url === '/redirect') {
        res.statusCode = 302;
        res.setHeader('location', `http://localhost:${port}/inside`);
        res.end();
      } else if (req.url === '/binary') res.end(Buffer.from([0x61, 0x00, 0x62]));
      else if (req.url === '/busy') {
        res.statusCode = 503;
        res.end('busy');
      } else res.end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  // The deployment allows this test's loopback server by address; nothing else inside is reachable.
  const deploymentAllowed = createHttpRequestTool(EgressPolicy.fromList('127.0.0.1'));
  const call = (args: Record<string, string | number>, allowHosts?: string[], tool = deploymentAllowed) =>
    runTool(tool, command('http.request', args, allowHosts ? { toolConfig: { allowHosts } } : {}), logger);

  it('refuses loopback, private and metadata addresses the agent allows but the deployment does not', async () => {
    const before = seen.length;
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://localhost:${port}/`, // a name that resolves to loopback
      `http://[::1]:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
    ]) {
      const host = new URL(url).hostname;
      const out = await call({ url }, [host], httpRequest);
      expect([url, out]).toEqual([
        url,
        expect.objectContaining({
          status: 'failed',
          error: expect.objectContaining({ code: 'http.address_not_allowed', retryable: false }),
        }),
      ]);
    }
    expect(seen.length).toBe(before);
  });

  it('does not follow a redirect from an allowed host to loopback, and refuses the location when asked for it', async () => {
    const before = seen.length;
    const out = await call({ url: `http://127.0.0.1:${port}/redirect` }, ['127.0.0.1', 'localhost']);
    expect(out).toMatchObject({ status: 'completed', result: { status: 302 } });
    expect(seen.length).toBe(before + 1); // the redirect itself, never /inside
    const location =
      (out.status === 'completed' && (out.result as { headers: { location: string } }).headers.location) || '';
    // The model may ask for the location next: where the deployment allows nothing inside, it is refused.
    expect(await call({ url: location }, ['localhost'], httpRequest)).toMatchObject({
      error: { code: 'http.address_not_allowed' },
    });
    expect(seen.length).toBe(before + 1);
  });

  it('returns binary content without NUL characters, which the log could not hold', async () => {
    const out = await call({ url: `http://127.0.0.1:${port}/binary` }, ['127.0.0.1']);
    expect(out).toMatchObject({ status: 'completed', result: { body: 'a\uFFFDb' } });
  });

  it('refuses a host the agent does not allow (and every host when none are listed)', async () => {
    expect(await call({ url: `http://127.0.0.1:${port}/` })).toMatchObject({
      status: 'failed',
      error: { code: 'http.host_not_allowed' },
    });
    expect(await call({ url: `http://127.0.0.1:${port}/` }, ['example.com'])).toMatchObject({
      error: { code: 'http.host_not_allowed' },
    });
  });

  it('sends the ledger key as Idempotency-Key and caps the response size', async () => {
    const out = await call({ url: `http://127.0.0.1:${port}/big`, method: 'POST', body: 'hi', maxBytes: 100 }, [
      '127.0.0.1',
    ]);
    expect(out).toMatchObject({ status: 'completed', result: { status: 200, truncated: true } });
    expect(out.status === 'completed' && (out.result as { body: string }).body).toHaveLength(100);
    expect(seen.at(-1)).toEqual({ key: 'acme:th-1:run-1:1:call-1', method: 'POST' });
  });

  it('retries 5xx with the same key, then reports the status', async () => {
    const before = seen.length;
    const out = await call({ url: `http://127.0.0.1:${port}/busy` }, ['127.0.0.1']);
    expect(out).toMatchObject({ status: 'failed', error: { code: 'http.status_503' } });
    expect(seen.slice(before).map((s) => s.key)).toEqual(Array(3).fill('acme:th-1:run-1:1:call-1'));
  });
});
