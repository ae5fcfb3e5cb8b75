import { createServer } from 'node:net';
import { answerError, createGatewayClient, describeProblem, expectOk, GatewayError } from './gateway.client';

describe('answerError', () => {
  it('names the status and the detail and tells whether to retry', () => {
    const e = answerError(409, {
      type: 'urn:ratchet:problem:approval-closed',
      title: 'Conflict',
      status: 409,
      detail: 'the run was cancelled',
      instance: '/v1/approvals/a/decision',
    });
    expect(e).toBeInstanceOf(GatewayError);
    expect(e.code).toBe('gateway.conflict');
    expect(e.message).toBe('the gateway answered 409: the run was cancelled');
    expect(e.details.problem?.type).toBe('urn:ratchet:problem:approval-closed');
    expect(e.retryable).toBe(false);
    expect(answerError(503, 'down').retryable).toBe(true);
    expect(answerError(429, undefined).code).toBe('gateway.rate_limited');
    expect(answerError(418, undefined).code).toBe('gateway.refused');
  });

  it('lists the issues of a 400', () => {
    expect(describeProblem({ title: 'Bad Request', errors: [{ detail: 'agent: required' }, { detail: 'x' }] })).toBe(
      ': Bad Request (agent: required; x)',
    );
    expect(describeProblem({ error: { code: 'E', message: 'm' } })).toBe(': E: m');
    expect(describeProblem('  plain\n text ')).toBe(': plain text');
    expect(describeProblem(undefined)).toBe('');
  });
});

describe('createGatewayClient', () => {
  it('says the gateway is unreachable, with the socket error, when nothing listens', async () => {
    const port = await freePort();
    const client = createGatewayClient({
      baseUrl: `http://127.0.0.1:${port}`,
      credential: () => 'k',
      timeoutMs: 5_000,
    });
    const error = await expectOk(client.GET('/v1/agents')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('gateway.unreachable');
    expect((error as GatewayError).details.reason).toBe('ECONNREFUSED');
    expect((error as GatewayError).retryable).toBe(true);
  });
});

/** A port that was free a moment ago (listened on, then closed). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
