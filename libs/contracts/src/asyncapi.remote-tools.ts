/**
 * The remote-tool contract (ADR 0016): what a service in any language implements to offer tools to
 * Ratchet's tool executor, which finds it by NATS service discovery and then asks each tool subject.
 */
export function remoteToolChannels(ref: (name: string) => unknown): Record<string, unknown> {
  const toolHeaders = {
    type: 'object',
    properties: {
      'Ratchet-Op': {
        type: 'string',
        enum: ['describe', 'reconcile'],
        description:
          'describe: answer the RemoteToolDescription; reconcile: did the effect with this key happen? Absent: a call',
      },
      'Ratchet-Idempotency-Key': {
        type: 'string',
        description: 'The ledger key of the logical call: the same on every retry of it. Deduplicate effects on it',
      },
      'Ratchet-Tenant': { type: 'string', description: 'The tenant of the call' },
      'Ratchet-Thread': { type: 'string' },
      'Ratchet-Run': { type: 'string' },
      'Ratchet-Call': { type: 'string' },
      'Ratchet-Principal': { type: 'string', description: 'The id of the principal the run acts for' },
      'Ratchet-Attempt': { type: 'string', description: '1, 2, ...: the attempt within one delivery' },
      'Ratchet-Waitpoint': {
        type: 'string',
        description:
          'Calls of a tool described with opensWaitpoint: the id of the waitpoint the call opens (the same on every attempt). ' +
          'Answer { ok: true, result: RemoteWaitpointOpened } once the job started, and complete the waitpoint with this id when it ends',
      },
    },
  };
  const messages = {
    describeRequest: {
      name: 'DescribeRequest',
      summary: '`Ratchet-Op: describe`, any body',
      headers: { type: 'object', properties: { 'Ratchet-Op': { const: 'describe' } }, required: ['Ratchet-Op'] },
    },
    description: {
      name: 'RemoteToolDescriptionReply',
      contentType: 'application/json',
      summary: '{ "ok": true, "result": RemoteToolDescription }',
      payload: {
        type: 'object',
        properties: { ok: { const: true }, result: ref('RemoteToolDescription') },
        required: ['ok', 'result'],
      },
    },
    callRequest: {
      name: 'RemoteToolRequest',
      contentType: 'application/json',
      headers: toolHeaders,
      payload: ref('RemoteToolRequest'),
    },
    callReply: {
      name: 'RemoteToolReply',
      contentType: 'application/json',
      summary: 'The result; for a tool described with opensWaitpoint, { "ok": true, "result": RemoteWaitpointOpened }',
      payload: ref('RemoteToolReply'),
    },
    reconcileReply: {
      name: 'RemoteReconcileReply',
      contentType: 'application/json',
      summary: '{ "ok": true, "result": RemoteReconcileResult }',
      payload: {
        type: 'object',
        properties: { ok: { const: true }, result: ref('RemoteReconcileResult') },
        required: ['ok', 'result'],
      },
    },
  };
  const tool = (address: string, description: string, parameters: Record<string, unknown>) => ({
    address,
    description,
    parameters,
    messages,
  });
  return {
    remoteTool: tool(
      '{prefix}.toolsvc.{tool}',
      'A remote tool offered to every tenant. Serve it in a queue group; answer describe, calls and (if described) reconcile. ' +
        "Reply with a JSON body on the request's reply subject. No responder means nothing happened; a timeout or an invalid reply " +
        'may have acted (an at-most-once tool then escalates to a human).',
      { prefix: { description: 'subject prefix' }, tool: { description: 'the tool name, e.g. crm.create_ticket' } },
    ),
    tenantRemoteTool: tool(
      '{prefix}.tenants.{tenant}.toolsvc.{tool}',
      "A remote tool offered to one tenant's runs only. NATS permissions bind who may subscribe here; the executor only offers a tool that described itself on this subject.",
      {
        prefix: { description: 'subject prefix' },
        tenant: { description: 'the tenant whose runs see the tool' },
        tool: { description: 'the tool name' },
      },
    ),
    remoteToolCancel: {
      address: '{prefix}.toolsvc.{tool}.cancel',
      description:
        "Cancel notices for the tool's calls (and `{prefix}.tenants.{tenant}.toolsvc.{tool}.cancel` for a tenant's tool): " +
        'sent when a call times out, or its run stops while a pure call is in flight. Subscribe without a queue group, so the ' +
        'instance doing the work hears it; stop the work for the named key and answer its request with an error. The call is ' +
        'recorded as it would be without the notice.',
      parameters: { prefix: { description: 'subject prefix' }, tool: { description: 'the tool name' } },
      messages: {
        cancel: {
          name: 'RemoteToolCancel',
          contentType: 'application/json',
          headers: toolHeaders,
          payload: ref('RemoteToolCancel'),
        },
      },
    },
    serviceDiscovery: {
      address: '$SRV.INFO',
      description:
        'NATS service discovery (the micro-services protocol of nats.js, nats.go, nats.py, ...): the executor asks every few seconds; ' +
        'a tool service answers an `io.nats.micro.v1.info_response` whose endpoints are its tool subjects. ' +
        'A subject missing from two rounds in a row leaves the catalog. Also answer `$SRV.PING` and `$SRV.STATS`.',
      messages: {
        info: {
          name: 'ServiceInfo',
          contentType: 'application/json',
          payload: {
            type: 'object',
            properties: {
              type: { const: 'io.nats.micro.v1.info_response' },
              name: { type: 'string' },
              id: { type: 'string' },
              version: { type: 'string' },
              description: { type: 'string' },
              metadata: { type: 'object' },
              endpoints: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    name: { type: 'string' },
                    subject: { type: 'string', description: 'a tool subject' },
                    queue_group: { type: 'string' },
                  },
                  required: ['name', 'subject'],
                },
              },
            },
            required: ['type', 'name', 'id', 'version', 'endpoints'],
          },
        },
      },
    },
  };
}

export function remoteToolOperations(): Record<string, unknown> {
  const on = (channel: string) => ({
    describeTool: {
      action: 'receive',
      channel: { $ref: `#/channels/${channel}` },
      summary: 'Describe the tool (name, description, input JSON Schema, kind, timeout, reconcile)',
      messages: [{ $ref: `#/channels/${channel}/messages/describeRequest` }],
      reply: { messages: [{ $ref: `#/channels/${channel}/messages/description` }] },
    },
    callTool: {
      action: 'receive',
      channel: { $ref: `#/channels/${channel}` },
      summary: 'Perform one call; deduplicate by Ratchet-Idempotency-Key',
      messages: [{ $ref: `#/channels/${channel}/messages/callRequest` }],
      reply: { messages: [{ $ref: `#/channels/${channel}/messages/callReply` }] },
    },
    reconcileTool: {
      action: 'receive',
      channel: { $ref: `#/channels/${channel}` },
      summary: '`Ratchet-Op: reconcile`: did the effect with this key happen? (only if described with reconcile: true)',
      messages: [{ $ref: `#/channels/${channel}/messages/callRequest` }],
      reply: { messages: [{ $ref: `#/channels/${channel}/messages/reconcileReply` }] },
    },
  });
  const shared = on('remoteTool');
  const tenant = on('tenantRemoteTool');
  return {
    describeRemoteTool: shared.describeTool,
    callRemoteTool: shared.callTool,
    reconcileRemoteTool: shared.reconcileTool,
    describeTenantRemoteTool: tenant.describeTool,
    callTenantRemoteTool: tenant.callTool,
    reconcileTenantRemoteTool: tenant.reconcileTool,
    hearCancel: {
      action: 'receive',
      channel: { $ref: '#/channels/remoteToolCancel' },
      summary: 'Stop the work of the call named by Ratchet-Idempotency-Key, if it still runs',
      messages: [{ $ref: '#/channels/remoteToolCancel/messages/cancel' }],
    },
    answerServiceDiscovery: {
      action: 'receive',
      channel: { $ref: '#/channels/serviceDiscovery' },
      summary: 'Answer $SRV.INFO with the tool subjects',
      messages: [{ $ref: '#/channels/serviceDiscovery/messages/info' }],
    },
  };
}
