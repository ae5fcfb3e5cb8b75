import {
  describedRemoteTool,
  parseRemoteDescription,
  RemoteDescriptionError,
  type RemoteToolTransport,
} from './remote';
import { runTool } from './run-tool';
import { waitpointIdFor } from './waitpoints';

const subject = 'p.toolsvc.crm.create_ticket';
const description = {
  name: 'crm.create_ticket',
  description: 'Open a ticket.',
  inputSchema: {
    type: 'object',
    properties: { title: { type: 'string' } },
    required: ['title'],
    additionalProperties: false,
  },
  kind: 'idempotent',
};
const describe_ = (result: unknown) => ({ ok: true, result });
const logger = { info: () => undefined, warn: () => undefined };
const command = (args: Record<string, unknown>) => ({
  kind: 'tool.call' as const,
  commandId: 'c',
  tenantId: 'acme',
  threadId: 'th',
  runId: 'r',
  step: 1,
  callId: 'call',
  tool: 'crm.create_ticket',
  args: args as never,
  idempotencyKey: 'acme:th:r:1:call',
  principal: { id: 'u', roles: [] },
});

describe('remote tool descriptions', () => {
  const error = (raw: unknown, name = 'crm.create_ticket') => {
    try {
      parseRemoteDescription(subject, name, raw);
    } catch (e) {
      expect(e).toBeInstanceOf(RemoteDescriptionError);
      return e as RemoteDescriptionError;
    }
    throw new Error('accepted');
  };

  it('refuses a schema that is not JSON Schema, a wrong name and a malformed answer, each named', () => {
    expect(
      error(describe_({ ...description, inputSchema: { type: 'object', properties: { t: { type: 7 } } } })).code,
    ).toBe('remote.invalid_schema');
    const mismatch = error(describe_(description), 'crm.delete_everything');
    expect(mismatch.code).toBe('remote.name_mismatch');
    expect(mismatch.message).toContain(
      'describes a tool named crm.create_ticket on the subject of crm.delete_everything',
    );
    expect(error({ nope: true }).code).toBe('remote.bad_description');
    expect(error(describe_({ ...description, kind: 'mostly' })).message).toContain('kind');
  });

  it('checks arguments against the described schema before anything is sent', async () => {
    const sent: string[] = [];
    const transport: RemoteToolTransport = {
      request: async (s, body) => {
        sent.push(body);
        return { ok: true, data: JSON.stringify({ ok: true, result: { ticketId: 'T-1' } }) };
      },
    };
    const tool = describedRemoteTool(
      parseRemoteDescription(subject, 'crm.create_ticket', describe_(description)),
      subject,
      transport,
    );
    expect(tool.parameters).toEqual(description.inputSchema);
    const refused = await runTool(tool, command({ title: 7, extra: 1 }), logger);
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'invalid_arguments' } });
    expect(sent).toEqual([]);
    await expect(runTool(tool, command({ title: 'Printer' }), logger)).resolves.toEqual({
      status: 'completed',
      result: { ticketId: 'T-1' },
    });
    expect(sent).toHaveLength(1);
  });

  it("tells the service to stop a call that timed out, on the cancel subject, with the call's headers", async () => {
    const cancels: { subject: string; body: string; headers: Record<string, string> }[] = [];
    const transport: RemoteToolTransport = {
      request: async () => ({ ok: false, reason: 'timeout', message: 'Timeout' }),
      cancel: (s, body, headers) => cancels.push({ subject: s, body, headers }),
    };
    const tool = describedRemoteTool(
      parseRemoteDescription(subject, 'crm.create_ticket', describe_({ ...description, kind: 'idempotent' })),
      subject,
      transport,
    );
    const out = await runTool(tool, command({ title: 'Printer' }), logger);
    expect(out).toMatchObject({ status: 'failed', error: { code: 'remote.timeout' } });
    // Each attempt that timed out was cancelled at the service.
    expect(cancels.length).toBeGreaterThanOrEqual(1);
    expect(cancels[0]).toEqual({
      subject: `${subject}.cancel`,
      body: JSON.stringify({ reason: 'no answer within 10000 ms' }), // the default timeout
      headers: expect.objectContaining({ 'Ratchet-Idempotency-Key': command({}).idempotencyKey }),
    });
  });

  describe('a tool that opens waitpoints (a job the service completes later)', () => {
    const NOW = new Date('2026-12-06T10:00:00.000Z');
    const waiting = { ...description, name: 'crm.create_ticket', opensWaitpoint: true };
    const callOf = (answer: unknown, config: Record<string, unknown> = {}) => {
      const sent: Record<string, string>[] = [];
      const transport: RemoteToolTransport = {
        request: async (_s, _body, headers) => {
          sent.push(headers);
          return { ok: true, data: JSON.stringify(answer) };
        },
      };
      const tool = describedRemoteTool(
        parseRemoteDescription(subject, 'crm.create_ticket', describe_(waiting)),
        subject,
        transport,
      );
      const run = runTool(
        tool,
        { ...command({ title: 'Printer' }), toolConfig: config as never },
        {
          logger,
          now: () => NOW,
        },
      );
      return { tool, sent, run };
    };
    const schema = { type: 'object', properties: { ticket: { type: 'string' } }, required: ['ticket'] };

    it("names the call's waitpoint in Ratchet-Waitpoint and waits on the service's terms", async () => {
      const { tool, sent, run } = callOf({
        ok: true,
        result: { waitpoint: { ttlSeconds: 600, resultSchema: schema } },
      });
      expect(tool.opensWaitpoint).toBe(true);
      const id = waitpointIdFor('acme', 'r', 1, 'call');
      await expect(run).resolves.toEqual({
        status: 'waiting',
        waitpoint: { id, expiresAt: '2026-12-06T10:10:00.000Z', onExpiry: 'tool_error', resultSchema: schema },
      });
      expect(sent[0]).toMatchObject({ 'Ratchet-Waitpoint': id, 'Ratchet-Idempotency-Key': 'acme:th:r:1:call' });
    });

    it("fills what the service leaves out from the agent's config; the agent alone decides what an expiry does", async () => {
      const agentSchema = { type: 'object' };
      const { run } = callOf(
        { ok: true, result: { waitpoint: {} } },
        { waitpoint: { ttlSeconds: 60, onExpiry: 'fail_run', result: agentSchema } },
      );
      await expect(run).resolves.toMatchObject({
        status: 'waiting',
        waitpoint: { expiresAt: '2026-12-06T10:01:00.000Z', onExpiry: 'fail_run', resultSchema: agentSchema },
      });
    });

    it('an answer without terms, or with a schema that does not compile, is a named failure: no wait on nothing', async () => {
      await expect(callOf({ ok: true, result: { ticket: 'T-1' } }).run).resolves.toMatchObject({
        status: 'failed',
        error: { code: 'remote.bad_reply', message: expect.stringContaining('answered no valid') },
      });
      await expect(
        callOf({ ok: true, result: { waitpoint: { resultSchema: { type: 'nonsense' } } } }).run,
      ).resolves.toMatchObject({ status: 'failed', error: { code: 'waitpoint.invalid_schema' } });
      await expect(
        callOf({ ok: true, result: { waitpoint: { ttlSeconds: 31 * 24 * 3600 } } }).run,
      ).resolves.toMatchObject({ status: 'failed', error: { code: 'remote.bad_reply' } });
    });

    it('a reconcile that finds the job started opens the same waitpoint the call would have', async () => {
      const sent: Record<string, string>[] = [];
      const transport: RemoteToolTransport = {
        request: async (_s, _body, headers) => {
          sent.push(headers);
          return {
            ok: true,
            data: JSON.stringify({ ok: true, result: { happened: true, result: { waitpoint: { ttlSeconds: 60 } } } }),
          };
        },
      };
      const tool = describedRemoteTool(
        parseRemoteDescription(subject, 'crm.create_ticket', describe_({ ...waiting, reconcile: true })),
        subject,
        transport,
      );
      const cmd = command({ title: 'Printer' });
      const ctx = {
        ...cmd,
        idempotencyKey: cmd.idempotencyKey,
        principal: cmd.principal,
        now: () => NOW,
        signal: new AbortController().signal,
        logger,
        config: {},
        attempt: 1,
      };
      const id = waitpointIdFor('acme', 'r', 1, 'call');
      await expect(tool.reconcile!({ title: 'Printer' }, ctx)).resolves.toEqual({
        happened: true,
        result: { id, expiresAt: '2026-12-06T10:01:00.000Z', onExpiry: 'tool_error' },
      });
      expect(sent[0]).toMatchObject({ 'Ratchet-Op': 'reconcile', 'Ratchet-Waitpoint': id });
    });

    it("a service's error is the call's failure, as for any remote tool (nothing waits)", async () => {
      await expect(
        callOf({ ok: false, error: { code: 'ci.busy', message: 'no runner free', retryable: false } }).run,
      ).resolves.toMatchObject({ status: 'failed', error: { code: 'ci.busy' } });
    });
  });
});
