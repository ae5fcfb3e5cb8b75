import { z } from 'zod';
import { AgentDefinition } from './agent';
import { EVENT_TYPES, EventData, ThreadEventSchema } from './thread-events';
import { ModelCallCommand, RunOutcome, RunRequest, RunStopNotice, ThreadInboxMessage, ToolCallCommand } from './wire';

/** Every public message, by the name its JSON Schema file carries (`docs/schemas/<name>.schema.json`). */
export const PUBLIC_MESSAGES: Readonly<Record<string, z.ZodType>> = {
  RunRequest,
  RunOutcome,
  ThreadEvent: ThreadEventSchema,
  ModelCallCommand,
  ToolCallCommand,
  ThreadInboxMessage,
  RunStopNotice,
  AgentDefinition,
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
    },
    operations: {
      publishRunRequest: {
        action: 'send',
        channel: { $ref: '#/channels/runRequests' },
        messages: [{ $ref: '#/channels/runRequests/messages/runRequest' }],
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
      receiveRunStops: {
        action: 'receive',
        channel: { $ref: '#/channels/runStops' },
        messages: [{ $ref: '#/channels/runStops/messages/runStop' }],
      },
    },
  };
}

function headersSchema(): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      'Nats-Msg-Id': { type: 'string', description: 'Use `<tenant>:<requestId>`' },
      traceparent: { type: 'string', description: 'W3C trace context (optional)' },
    },
  };
}
