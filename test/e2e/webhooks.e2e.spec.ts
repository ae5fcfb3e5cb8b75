import { verifyWebhook, WEBHOOK_HEADERS } from '@ratchet/adapters';
import type { WebhookDeliveryView } from '@ratchet/contracts';
import { runIdFor } from '@ratchet/platform';
import { runProcess, sourceCommand } from '@ratchet/testing';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TestStack } from './stack';

/*
 * Completion webhooks through the real services, to receivers on loopback: one that fails its first
 * attempts, one that answers too slowly once, one that never answers. Deliveries arrive signed (the
 * receiver verifies them with the tenant's secret), at least once, all copies with one delivery id;
 * the one that never answers is recorded dead and listed by the API and the CLI.
 */
const TENANT = 'hooks';
const KEY = 'rk_e2e_webhooks_bootstrap_key';
const cli = sourceCommand('apps/cli/src/main.ts');

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

function receiver(answer: (n: number, res: ServerResponse) => void): { server: Server; got: Received[] } {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      answer(got.length, res);
    });
  });
  return { server, got };
}

const url = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`;

describe('completion webhooks: signed, retried, at least once, dead ones listed', () => {
  let stack: TestStack;
  let base: string;
  // Fails twice (503), then accepts.
  const flaky = receiver((n, res) => res.writeHead(n <= 2 ? 503 : 204).end());
  // Answers its first request after the sender's deadline (it still processed it), then at once.
  const slow = receiver((n, res) => void setTimeout(() => res.writeHead(200).end('ok'), n === 1 ? 2500 : 0));
  // Never answers.
  const silent = receiver(() => undefined);

  beforeAll(async () => {
    await Promise.all(
      [flaky, slow, silent].map(({ server }) => new Promise<void>((r) => server.listen(0, '127.0.0.1', r))),
    );
    stack = await TestStack.create();
    await stack.start('orchestrator', {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_MAX_ATTEMPTS: '3',
      WEBHOOK_BASE_DELAY_MS: '200',
      WEBHOOK_TIMEOUT_MS: '1000',
    });
    const gateway = await stack.start('gateway', {
      GATEWAY_BOOTSTRAP_API_KEY: KEY,
      GATEWAY_BOOTSTRAP_TENANT: TENANT,
      WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    base = `http://127.0.0.1:${gateway.port}`;
    const reply = await stack.nc.request(
      `${stack.prefix.subject}.agents.${TENANT}.register`,
      JSON.stringify({
        op: 'register',
        principal: { id: 'ops', roles: ['admin'] },
        definition: { name: 'quick', model: { provider: 'scripted', script: [{ reply: 'all done' }] } },
      }),
      { timeout: 10_000 },
    );
    expect(reply.json()).toMatchObject({ ok: true });
  });
  afterAll(async () => {
    await stack?.stop();
    for (const { server } of [flaky, slow, silent]) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  const api = async (method: string, path: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${KEY}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const until = async (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  const deliveries = async (status?: string) =>
    (
      (await (await api('GET', `/v1/webhooks/deliveries${status ? `?status=${status}` : ''}`)).json()) as {
        deliveries: WebhookDeliveryView[];
      }
    ).deliveries;

  it('refuses a webhook URL that is not http(s) with a 400 naming the field', async () => {
    const res = await api('POST', '/v1/runs', { agent: 'quick', input: 'hi', webhookUrl: 'ftp://127.0.0.1/x' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toMatch(/webhookUrl/);
  });

  it('delivers each outcome signed, retrying a failing receiver, at least once with one delivery id', async () => {
    const secretRes = await api('GET', '/v1/webhooks/secret');
    expect(secretRes.status).toBe(200);
    const { secret, scheme } = (await secretRes.json()) as { secret: string; scheme: string };
    expect(secret).toMatch(/^whsec_/);
    expect(scheme).toMatch(/HMAC-SHA256/);

    const start = async (idempotencyKey: string, webhookUrl: string) => {
      const res = await fetch(`${base}/v1/runs`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${KEY}`,
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
        },
        body: JSON.stringify({ agent: 'quick', input: 'go', webhookUrl }),
      });
      expect(res.status).toBe(202);
      return ((await res.json()) as { runId: string }).runId;
    };
    const flakyRun = await start('hook-flaky', url(flaky.server));
    const silentRun = await start('hook-silent', url(silent.server));
    // A run requested over NATS names its webhook the same way.
    await stack.publishRequest(TENANT, {
      requestId: 'hook-slow',
      agent: 'quick',
      input: [{ role: 'user', content: 'go' }],
      principal: { id: 'svc', roles: ['runner'] },
      webhook: { url: url(slow.server) },
    });
    const slowRun = runIdFor(TENANT, 'hook-slow');

    await until('the flaky receiver to accept', () => flaky.got.length >= 3);
    await until('the slow receiver to be answered in time', () => slow.got.length >= 2);
    await until('the silent receiver to be given up on', async () => (await deliveries('dead')).length === 1);

    const verified = (r: Received) =>
      verifyWebhook(
        secret,
        {
          timestamp: String(r.headers[WEBHOOK_HEADERS.timestamp.toLowerCase()]),
          signature: String(r.headers[WEBHOOK_HEADERS.signature.toLowerCase()]),
        },
        r.body,
      );
    for (const [got, runId] of [
      [flaky.got, flakyRun],
      [slow.got, slowRun],
      [silent.got, silentRun],
    ] as const) {
      expect(got.every(verified)).toBe(true);
      // Every copy is the same delivery: one id (header and body), the run's outcome.
      const ids = new Set(got.map((r) => r.headers[WEBHOOK_HEADERS.id.toLowerCase()]));
      expect(ids.size).toBe(1);
      const body = JSON.parse(got[0]!.body) as Record<string, unknown>;
      expect(body).toMatchObject({
        type: 'run.ended',
        tenantId: TENANT,
        runId,
        status: 'completed',
        output: 'all done',
      });
      expect(body['deliveryId']).toBe([...ids][0]);
      expect(got.map((r) => r.headers[WEBHOOK_HEADERS.attempt.toLowerCase()])).toEqual(
        got.map((_, i) => String(i + 1)),
      );
    }
    // A body altered in transit, or signed with another secret, does not verify.
    const first = flaky.got[0]!;
    expect(verified({ ...first, body: first.body.replace('completed', 'failed') })).toBe(false);
    expect(
      verifyWebhook(
        'whsec_other',
        {
          timestamp: String(first.headers['ratchet-webhook-timestamp']),
          signature: String(first.headers['ratchet-webhook-signature']),
        },
        first.body,
      ),
    ).toBe(false);

    const all = await deliveries();
    const byRun = new Map(all.map((d) => [d.runId, d]));
    expect(byRun.get(flakyRun)).toMatchObject({ status: 'delivered', attempts: 3, lastStatus: 204 });
    expect(byRun.get(slowRun)).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(byRun.get(silentRun)).toMatchObject({
      status: 'dead',
      attempts: 3,
      lastError: 'no answer within 1000 ms (after 3 attempts)',
    });
    expect(silent.got).toHaveLength(3);

    const listed = await runProcess(
      cli.command,
      [...cli.args, 'webhooks', '--tenant', TENANT, '--status', 'dead', '--json'],
      {
        ...cli.env,
        ...stack.env,
      },
    );
    expect(listed).toMatchObject({ code: 0 });
    expect(
      listed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as WebhookDeliveryView),
    ).toEqual([expect.objectContaining({ runId: silentRun, status: 'dead' })]);
  });
  it('rotates the secret over HTTP and the CLI: the previous one signs until the overlap ends; bad input is a 400', async () => {
    const before = ((await (await api('GET', '/v1/webhooks/secret')).json()) as { secret: string }).secret;
    const bad = await api('POST', '/v1/webhooks/secret/rotate', { overlapSeconds: -1 });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toMatch(/overlapSeconds/);
    expect(((await (await api('GET', '/v1/webhooks/secret')).json()) as { secret: string }).secret).toBe(before);

    const res = await api('POST', '/v1/webhooks/secret/rotate', { overlapSeconds: 3600 });
    expect(res.status).toBe(200);
    const rotated = (await res.json()) as { secret: string; previousValidUntil: string | null };
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(before);
    expect(Date.parse(rotated.previousValidUntil!)).toBeGreaterThan(Date.now() + 3_000_000);
    expect(await (await api('GET', '/v1/webhooks/secret')).json()).toMatchObject({
      secret: rotated.secret,
      previousValidUntil: rotated.previousValidUntil,
    });

    const cliRotated = await runProcess(
      cli.command,
      [...cli.args, 'webhook-secret', '--tenant', TENANT, '--rotate', '--overlap', '0s', '--json'],
      { ...cli.env, ...stack.env },
    );
    expect(cliRotated).toMatchObject({ code: 0 });
    const line = JSON.parse(cliRotated.stdout.trim()) as { secret: string; previousValidUntil: string | null };
    expect(line.secret).not.toBe(rotated.secret);
    expect(line.previousValidUntil).toBeNull();
    expect(await (await api('GET', '/v1/webhooks/secret')).json()).toMatchObject({
      secret: line.secret,
      previousValidUntil: null,
    });
    const badCli = await runProcess(
      cli.command,
      [...cli.args, 'webhook-secret', '--tenant', TENANT, '--rotate', '--overlap', '9d'],
      { ...cli.env, ...stack.env },
    );
    expect(badCli.code).not.toBe(0);
    expect(badCli.stderr).toMatch(/--overlap must be a duration from 0s to 7d/);
  });
});
