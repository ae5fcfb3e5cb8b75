import { z } from 'zod';
import { AgentDefinition } from './agent';
import { EVENT_TYPES, EventData, ThreadEventSchema } from './thread-events';
import {
  CancelRunMessage,
  ModelCallCommand,
  RunOutcome,
  RunRequest,
  RunStopNotice,
  ThreadInboxMessage,
  TokenChunk,
  ToolCallCommand,
  ToolResolveCommand,
} from './wire';
import { RemoteReconcileResult, RemoteToolDescription, RemoteToolReply, RemoteToolRequest } from './remote-tools';

/** Every public message, by the name its JSON Schema file carries (`docs/schemas/<name>.schema.json`). */
export const PUBLIC_MESSAGES: Readonly<Record<string, z.ZodType>> = {
  RunRequest,
  RunOutcome,
  ThreadEvent: ThreadEventSchema,
  ModelCallCommand,
  ToolCallCommand,
  ThreadInboxMessage,
  RunStopNotice,
  CancelRunMessage,
  ToolResolveCommand,
  TokenChunk,
  AgentDefinition,
  RemoteToolDescription,
  RemoteToolRequest,
  RemoteToolReply,
  RemoteReconcileResult,
};

/** JSON Schema (draft 2020-12) of a message as it appears on the wire (input shape: defaults optional). */
export function jsonSchemaOf(name: string, schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return { $id: `https://ratchet.dev/schemas/${name}.schema.json`, title: name, ...json };
}

export function eventDataSchemas(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    EVENT_TYPES.map((t) => [
      t,
      z.toJSONSchema(EventData[t], { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Record<
        string,
        unknown
      >,
    ]),
  );
}

/**
 * The AsyncAPI 3.0 description of the public subjects: what another team needs to publish a run
 * request and follow its thread without reading our code.
 */
export function asyncApiDocument(version: string): Record<string, unknown> {
  const ref = (name: string) => ({ $ref: `./schemas/${name}.schema.json` });
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Ratchet',
      version,
      description:
        'Public NATS subjects of Ratchet. `<prefix>` is the configured subject prefix (default `ratchet`). ' +
        'Messages are JSON; JetStream publishes should set `Nats-Msg-Id` so retries within the duplicate window are dropped, ' +
        'and `traceparent` (W3C) to join the run to your trace. The tenant is always the subject token, never a body field.',
    },
    servers: { nats: { host: 'localhost:4222', protocol: 'nats', description: 'NATS with JetStream' } },
    channels: {
      runRequests: {
        address: '{prefix}.requests.{tenant}',
        description:
          'Start a run. Captured by the REQUESTS stream. The same `requestId` starts at most one run, however often and late it is sent: ' +
          'sent again with the same body it is answered with the run it started (its outcome, once it ended); with another body or thread it is refused with `request.conflict`. ' +
          'A request that cannot start (invalid, unknown agent, busy thread under `reject`, conflict) is answered on `replyTo` with status `rejected`.',
        parameters: {
          prefix: { description: 'subject prefix' },
          tenant: { description: 'tenant id, bound by NATS permissions' },
        },
        messages: {
          runRequest: {
            name: 'RunRequest',
            contentType: 'application/json',
            payload: ref('RunRequest'),
            headers: headersSchema(),
          },
        },
      },
      runOutcomes: {
        address: '{replyTo}',
        description:
          'The terminal outcome of a run (core NATS publish to the `replyTo` subject of its request, after the commit that decided it). ' +
          'It may be delivered more than once (a publisher that died before recording it, a resent request): every copy carries the same `outcomeId`; drop repeats by it.',
        parameters: { replyTo: { description: 'the subject the requester named' } },
        messages: { runOutcome: { name: 'RunOutcome', contentType: 'application/json', payload: ref('RunOutcome') } },
      },
      threadEvents: {
        address: '{prefix}.events.{tenant}.{thread}',
        description:
          'Every committed event of a thread, in version order, with `Nats-Msg-Id` = event id. Captured by the EVENTS stream (limits retention). ' +
          'Postgres holds the log of record; this feed is for subscribers, live tails and SRE replays.',
        parameters: {
          prefix: { description: 'subject prefix' },
          tenant: { description: 'tenant id' },
          thread: { description: 'thread id' },
        },
        messages: {
          threadEvent: { name: 'ThreadEvent', contentType: 'application/json', payload: ref('ThreadEvent') },
        },
      },
      runStops: {
        address: '{prefix}.stop.{tenant}.{thread}',
        description:
          'A run stopped (cancelled, interrupted, out of time): core NATS broadcast after the commit that ended it, so every process working for the run aborts what it does. ' +
          'The same notice goes durably to the tool executor on `{prefix}.cmd.control.{tenant}`. Best effort here; the guarantees rest on leases and the executor record.',
        parameters: {
          prefix: { description: 'subject prefix' },
          tenant: { description: 'tenant id' },
          thread: { description: 'thread id' },
        },
        messages: {
          runStop: { name: 'RunStopNotice', contentType: 'application/json', payload: ref('RunStopNotice') },
        },
      },
      threadTokens: {
        address: '{prefix}.tokens.{tenant}.{thread}',
        description:
          "The model's answers as they are written (core NATS, not durable: only what is written while you are subscribed). " +
          '`kind: delta` carries a piece (`text`, `toolCalls` deltas) with `seq` per attempt; `kind: reset` opens an attempt: drop what you had of that run and step (a retry, a worker that stopped mid-answer). ' +
          'The text of record is the `model.responded` event on the thread events channel; the gateway serves this feed as `GET /v1/threads/{id}/stream?mode=messages`.',
        parameters: {
          prefix: { description: 'subject prefix' },
          tenant: { description: 'tenant id' },
          thread: { description: 'thread id' },
        },
        messages: {
          tokenChunk: { name: 'TokenChunk', contentType: 'application/json', payload: ref('TokenChunk') },
        },
      },
      runCancels: {
        address: '{prefix}.inbox.{tenant}.{thread}',
        description:
          "Cancel a run: a `run.cancel` message on its thread's inbox (captured by the INBOX stream; what `POST /v1/runs/{runId}/cancel` publishes). " +
          'The run ends with `run.cancelled` on the thread events channel and its outcome (status `cancelled`) on its `replyTo`; open tool calls are closed with results, its pending approvals are closed as `cancelled`. ' +
          'A cancel for a run that already ended, or is unknown to the thread, changes nothing. Set `Nats-Msg-Id` to `messageId`. The inbox carries other messages of the thread too (model and tool results, approval decisions): publish only `run.cancel` on it.',
        parameters: {
          prefix: { description: 'subject prefix' },
          tenant: { description: 'tenant id, bound by NATS permissions' },
          thread: { description: 'the run’s thread id' },
        },
        messages: {
          runCancel: {
            name: 'CancelRunMessage',
            contentType: 'application/json',
            payload: ref('CancelRunMessage'),
            headers: headersSchema('Use `messageId`'),
          },
        },
      },
      toolResolutions: {
        address: '{prefix}.cmd.tool.{tenant}',
        description:
          'Settle an uncertain effect (a tool call whose outcome the ledger cannot know: the worker died mid-call, the tool answered ambiguously) by its ledger key: `happened` with the result the outside system shows, `retry` to run the tool again under the same key, or `fail`. ' +
          'Captured by the COMMANDS stream and consumed by the tool executor; the approvals service sends it when an escalation is decided (`POST /v1/approvals/{id}/decision`), which also checks roles: publish here only from a service trusted to decide. ' +
          'A key that is not uncertain changes nothing (one already settled has its stored outcome sent to the run again; an unknown or another tenant’s key is ignored). Set `Nats-Msg-Id` to `commandId` and `Ratchet-Idempotency-Key` to the ledger key.',
        parameters: {
          prefix: { description: 'subject prefix' },
          tenant: { description: 'tenant id, bound by NATS permissions' },
        },
        messages: {
          toolResolve: {
            name: 'ToolResolveCommand',
            contentType: 'application/json',
            payload: ref('ToolResolveCommand'),
            headers: headersSchema('Use `commandId`', {
              'Ratchet-Idempotency-Key': { type: 'string', description: 'The ledger key (`idempotencyKey`)' },
            }),
          },
        },
      },
      ...remoteToolChannels(ref),
    },
    operations: {
      ...remoteToolOperations(),
      publishRunRequest: {
        action: 'send',
        channel: { $ref: '#/channels/runRequests' },
        messages: [{ $ref: '#/channels/runRequests/messages/runRequest' }],
        reply: {
          address: {
            location: '$message.payload#/replyTo',
            description: 'The run’s outcome goes to the `replyTo` subject the request names',
          },
          channel: { $ref: '#/channels/runOutcomes' },
          messages: [{ $ref: '#/channels/runOutcomes/messages/runOutcome' }],
        },
      },
      cancelRun: {
        action: 'send',
        channel: { $ref: '#/channels/runCancels' },
        messages: [{ $ref: '#/channels/runCancels/messages/runCancel' }],
      },
      resolveUncertainEffect: {
        action: 'send',
        channel: { $ref: '#/channels/toolResolutions' },
        messages: [{ $ref: '#/channels/toolResolutions/messages/toolResolve' }],
      },
      receiveRunOutcome: {
        action: 'receive',
        channel: { $ref: '#/channels/runOutcomes' },
        messages: [{ $ref: '#/channels/runOutcomes/messages/runOutcome' }],
      },
      followThreadEvents: {
        action: 'receive',
        channel: { $ref: '#/channels/threadEvents' },
        messages: [{ $ref: '#/channels/threadEvents/messages/threadEvent' }],
      },
      followThreadTokens: {
        action: 'receive',
        channel: { $ref: '#/channels/threadTokens' },
        messages: [{ $ref: '#/channels/threadTokens/messages/tokenChunk' }],
      },
      receiveRunStops: {
        action: 'receive',
        channel: { $ref: '#/channels/runStops' },
        messages: [{ $ref: '#/channels/runStops/messages/runStop' }],
      },
    },
  };
}

/**
 * The remote-tool contract (ADR 0016): what a service in any language implements to offer tools to
 * Ratchet's tool executor, which finds it by NATS service discovery and then asks each tool subject.
 */
function remoteToolChannels(ref: (name: string) => unknown): Record<string, unknown> {
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
    callReply: { name: 'RemoteToolReply', contentType: 'application/json', payload: ref('RemoteToolReply') },
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

function remoteToolOperations(): Record<string, unknown> {
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
    answerServiceDiscovery: {
      action: 'receive',
      channel: { $ref: '#/channels/serviceDiscovery' },
      summary: 'Answer $SRV.INFO with the tool subjects',
      messages: [{ $ref: '#/channels/serviceDiscovery/messages/info' }],
    },
  };
}

function headersSchema(
  msgId = 'Use `<tenant>:<requestId>`',
  more: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      'Nats-Msg-Id': { type: 'string', description: msgId },
      traceparent: { type: 'string', description: 'W3C trace context (optional)' },
      ...more,
    },
  };
}
