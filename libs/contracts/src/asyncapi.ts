import { remoteToolChannels, remoteToolOperations } from './asyncapi.remote-tools';

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
      threadDecisions: {
        address: '{prefix}.feed.{tenant}.{thread}',
        description:
          'The thread feed (v2, ADR 0042): one message per committed decision of a thread, carrying its events in version order (`FeedDecision`, `feed: 2`; each a `ThreadEvent`), ' +
          'with `Nats-Msg-Id` = `decision:<id of its first event>` and `Ratchet-Message-Type: feed.decision`. A decision too large for one message is split in order into parts (`part`), each named by its own first event. ' +
          'Captured by the EVENTS stream (limits retention); Postgres holds the log of record. A reader checks `feed` and refuses another version by name. ' +
          'It replaces the per-event feed on `{prefix}.events.{tenant}.{thread}` (v1), which is no longer published.',
        parameters: {
          prefix: { description: 'subject prefix' },
          tenant: { description: 'tenant id' },
          thread: { description: 'thread id' },
        },
        messages: {
          feedDecision: { name: 'FeedDecision', contentType: 'application/json', payload: ref('FeedDecision') },
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
          'The text of record is the `model.responded` event on the thread feed; the gateway serves this feed as `GET /v1/threads/{id}/stream?mode=messages`.',
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
          'The run ends with `run.cancelled` on the thread feed and its outcome (status `cancelled`) on its `replyTo`; open tool calls are closed with results, its pending approvals are closed as `cancelled`. ' +
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
      principalRevocations: {
        address: '{prefix}.cmd.revocation.{tenant}',
        description:
          'A principal’s credential was revoked (an API key with `ratchet keys revoke`, a JWT subject or some of its tokens with `POST /v1/revocations`): captured by the COMMANDS stream and consumed by the orchestrators, which cancel the principal’s queued and running runs (`run.cancelled`, reason `principal.revoked: …`; with `scope: tokens` only runs started before `at`) and, for `scope: principal`, pause its schedules. ' +
          'The gateway and the CLI write it in the revocation’s own transaction (an outbox row the orchestrators relay) and publish it at once; handled once per `messageId`. Published only by those: a publisher here could stop any run of the tenant.',
        parameters: {
          prefix: { description: 'subject prefix' },
          tenant: { description: 'tenant id, bound by NATS permissions' },
        },
        messages: {
          principalRevoked: {
            name: 'PrincipalRevokedMessage',
            contentType: 'application/json',
            payload: ref('PrincipalRevokedMessage'),
            headers: headersSchema('Use `messageId`'),
          },
        },
      },
      waitpointCompletions: {
        address: '{prefix}.waitpoints.{tenant}.complete',
        description:
          'Complete a waitpoint of the tenant (request/reply; docs/waitpoints.md): `result` (checked against the schema its tool declared) or `error` (the job outside failed). ' +
          'Recorded once, with the message that wakes the run; the same completion again answers the same; another body, an expired or a closed waitpoint is refused by name (`error.refusal`). ' +
          'The tenant is the subject token, bound by NATS permissions; another tenant’s waitpoint id is `not_found`.',
        parameters: {
          prefix: { description: 'subject prefix' },
          tenant: { description: 'tenant id, bound by NATS permissions' },
        },
        messages: {
          waitpointCompletion: {
            name: 'WaitpointCompletionRequest',
            contentType: 'application/json',
            payload: ref('WaitpointCompletionRequest'),
          },
          waitpointCompletionReply: {
            name: 'WaitpointCompletionReply',
            contentType: 'application/json',
            payload: ref('WaitpointCompletionReply'),
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
      completeWaitpoint: {
        action: 'send',
        channel: { $ref: '#/channels/waitpointCompletions' },
        messages: [{ $ref: '#/channels/waitpointCompletions/messages/waitpointCompletion' }],
        reply: {
          channel: { $ref: '#/channels/waitpointCompletions' },
          messages: [{ $ref: '#/channels/waitpointCompletions/messages/waitpointCompletionReply' }],
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
      followThreadDecisions: {
        action: 'receive',
        channel: { $ref: '#/channels/threadDecisions' },
        messages: [{ $ref: '#/channels/threadDecisions/messages/feedDecision' }],
      },
      followThreadTokens: {
        action: 'receive',
        channel: { $ref: '#/channels/threadTokens' },
        messages: [{ $ref: '#/channels/threadTokens/messages/tokenChunk' }],
      },
      followRevocations: {
        action: 'receive',
        channel: { $ref: '#/channels/principalRevocations' },
        messages: [{ $ref: '#/channels/principalRevocations/messages/principalRevoked' }],
      },
      receiveRunStops: {
        action: 'receive',
        channel: { $ref: '#/channels/runStops' },
        messages: [{ $ref: '#/channels/runStops/messages/runStop' }],
      },
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
