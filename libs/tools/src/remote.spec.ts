import {
  describedRemoteTool,
  parseRemoteDescription,
  RemoteDescriptionError,
  type RemoteToolTransport,
} from './remote';
import { runTool } from './run-tool';

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
});
