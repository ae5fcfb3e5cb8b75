import { z } from 'zod';
import { AgentDefinition } from './agent';
import { EVENT_TYPES, EventData, ThreadEventSchema } from './thread-events';
import {
  CancelRunMessage,
  ModelCallCommand,
  PrincipalRevokedMessage,
  RunOutcome,
  RunRequest,
  RunStopNotice,
  ThreadInboxMessage,
  TokenChunk,
  ToolCallCommand,
  ToolResolveCommand,
} from './wire';
import {
  RemoteReconcileResult,
  RemoteToolCancel,
  RemoteToolDescription,
  RemoteToolReply,
  RemoteToolRequest,
  RemoteWaitpointOpened,
} from './remote-tools';
import { ApprovalsReply, WaitpointCompletionRequest } from './approvals-api';
import { FeedDecision } from './feed';

/** Every public message, by the name its JSON Schema file carries (`docs/schemas/<name>.schema.json`). */
export const PUBLIC_MESSAGES: Readonly<Record<string, z.ZodType>> = {
  RunRequest,
  RunOutcome,
  ThreadEvent: ThreadEventSchema,
  FeedDecision,
  ModelCallCommand,
  ToolCallCommand,
  ThreadInboxMessage,
  RunStopNotice,
  CancelRunMessage,
  PrincipalRevokedMessage,
  ToolResolveCommand,
  TokenChunk,
  AgentDefinition,
  RemoteToolDescription,
  RemoteToolRequest,
  RemoteToolReply,
  RemoteReconcileResult,
  RemoteToolCancel,
  RemoteWaitpointOpened,
  WaitpointCompletionRequest,
  WaitpointCompletionReply: ApprovalsReply,
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
