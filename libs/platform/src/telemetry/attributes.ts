/**
 * Every span and metric attribute name Ratchet uses, in one place. GenAI names follow the OpenTelemetry
 * semantic conventions for generative AI; `ratchet.*` names are ours.
 */
export const ATTR = {
  tenant: 'ratchet.tenant',
  thread: 'ratchet.thread',
  run: 'ratchet.run',
  step: 'ratchet.step',
  attempt: 'ratchet.attempt',
  redeliveries: 'ratchet.redelivery_count',
  resume: 'ratchet.resume',
  consumer: 'ratchet.consumer',
  messageKind: 'ratchet.message.kind',
  versionFrom: 'ratchet.version.from',
  versionTo: 'ratchet.version.to',
  eventCount: 'ratchet.event.count',
  eventTypes: 'ratchet.event.types',
  outboxRows: 'ratchet.outbox.rows',
  /** Kept beside `gen_ai.tool.name` for dashboards written before the GenAI names. */
  toolName: 'ratchet.tool.name',
  toolKind: 'ratchet.tool.kind',
  toolCall: 'ratchet.tool.call_id',
  ledgerDecision: 'ratchet.ledger.decision',
  approvalId: 'ratchet.approval.id',
  approvalKind: 'ratchet.approval.kind',
  /** The role an approval needs, held by whoever decided it (`system` for an expiry): never who it was. */
  approvalRole: 'ratchet.approval.role',
  /** On a span link: why the span points at another one (a LINK value). */
  linkReason: 'ratchet.link.reason',
  outcome: 'ratchet.outcome',
  // GenAI semantic conventions (gen_ai.provider.name replaced gen_ai.system)
  genAiProvider: 'gen_ai.provider.name',
  genAiOperation: 'gen_ai.operation.name',
  genAiRequestModel: 'gen_ai.request.model',
  genAiResponseModel: 'gen_ai.response.model',
  genAiInputTokens: 'gen_ai.usage.input_tokens',
  genAiOutputTokens: 'gen_ai.usage.output_tokens',
  genAiToolName: 'gen_ai.tool.name',
  genAiToolCallId: 'gen_ai.tool.call.id',
  genAiAgentName: 'gen_ai.agent.name',
  genAiConversationId: 'gen_ai.conversation.id',
  // messaging semantic conventions
  messagingSystem: 'messaging.system',
  messagingDestination: 'messaging.destination.name',
  messagingMessageId: 'messaging.message.id',
} as const;

export const SPAN = {
  consume: (consumer: string) => `consume ${consumer}`,
  append: 'thread.append',
  modelCall: (model: string) => `chat ${model}`,
  toolExecute: (tool: string) => `execute_tool ${tool}`,
  ledger: 'effect_ledger.decide',
  outboxPublish: 'outbox.publish',
  approvalWait: 'approval.wait',
  run: 'run',
  /** A whole run, from its `run.started` to its end (GenAI conventions: `invoke_agent {agent}`). */
  invokeAgent: (agent: string) => `invoke_agent ${agent}`,
} as const;

/**
 * Why a span links to another (the `ratchet.link.reason` attribute of the link). Resumed and retried
 * work links to the attempt it replaces; that attempt's span may never have been exported (its process
 * died), but its context was stored with the event or ledger row it wrote.
 */
export const LINK = {
  /** A model call's next attempt (`model.requested`, attempt > 1) → the span that requested the one before. */
  replacedAttempt: 'replaced_attempt',
  /** `run.resumed` → the span that wrote the thread's last event before the resume. */
  resumedAfter: 'resumed_after',
  /** A tool call that found its effect in the ledger → the span of the attempt that last claimed it. */
  ledgerClaim: 'ledger_claim',
} as const;

/** The attributes of an `execute_tool` span, wherever the call runs (the executor, or the orchestrator for a local tool). */
export function toolCallAttributes(command: {
  tool: string;
  callId: string;
  tenantId: string;
  threadId: string;
  runId: string;
  step: number;
}): Record<string, string | number> {
  return {
    [ATTR.genAiOperation]: 'execute_tool',
    [ATTR.genAiToolName]: command.tool,
    [ATTR.genAiToolCallId]: command.callId,
    [ATTR.toolName]: command.tool,
    [ATTR.toolCall]: command.callId,
    [ATTR.tenant]: command.tenantId,
    [ATTR.thread]: command.threadId,
    [ATTR.run]: command.runId,
    [ATTR.step]: command.step,
  };
}

/** Hosts of OpenAI-compatible APIs, by the `gen_ai.provider.name` the GenAI conventions give them. */
const PROVIDER_HOSTS: ReadonlyArray<[RegExp, string]> = [
  [/(^|\.)api\.openai\.com$/, 'openai'],
  [/(^|\.)openai\.azure\.com$/, 'azure.ai.openai'],
  [/(^|\.)services\.ai\.azure\.com$/, 'azure.ai.inference'],
  [/(^|\.)api\.anthropic\.com$/, 'anthropic'],
  [/(^|\.)generativelanguage\.googleapis\.com$/, 'gcp.gemini'],
  [/(^|\.)aiplatform\.googleapis\.com$/, 'gcp.vertex_ai'],
  [/(^|\.)bedrock(-runtime)?\.[a-z0-9-]+\.amazonaws\.com$/, 'aws.bedrock'],
  [/(^|\.)api\.mistral\.ai$/, 'mistral_ai'],
  [/(^|\.)api\.groq\.com$/, 'groq'],
  [/(^|\.)api\.deepseek\.com$/, 'deepseek'],
  [/(^|\.)api\.x\.ai$/, 'x_ai'],
  [/(^|\.)api\.perplexity\.ai$/, 'perplexity'],
  [/(^|\.)api\.cohere\.(ai|com)$/, 'cohere'],
];

/**
 * `gen_ai.provider.name` of a model config: who really answers. The `openai` provider speaks the
 * OpenAI API to `baseUrl` (default api.openai.com), which may be another vendor's compatible endpoint:
 * the host names it. A server Ratchet cannot name (a self-hosted one) is `_OTHER`; the scripted model
 * (demos, tests) is `ratchet.scripted`.
 */
export function genAiProviderName(model: { provider: string; baseUrl?: string | undefined }): string {
  if (model.provider === 'scripted') return 'ratchet.scripted';
  if (model.provider !== 'openai') return model.provider;
  if (model.baseUrl === undefined) return 'openai';
  let host: string;
  try {
    host = new URL(model.baseUrl).hostname.toLowerCase();
  } catch {
    return '_OTHER';
  }
  return PROVIDER_HOSTS.find(([pattern]) => pattern.test(host))?.[1] ?? '_OTHER';
}
