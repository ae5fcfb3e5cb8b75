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
  toolName: 'ratchet.tool.name',
  toolKind: 'ratchet.tool.kind',
  toolCall: 'ratchet.tool.call_id',
  ledgerDecision: 'ratchet.ledger.decision',
  approvalId: 'ratchet.approval.id',
  outcome: 'ratchet.outcome',
  // GenAI semantic conventions
  genAiSystem: 'gen_ai.system',
  genAiOperation: 'gen_ai.operation.name',
  genAiRequestModel: 'gen_ai.request.model',
  genAiResponseModel: 'gen_ai.response.model',
  genAiInputTokens: 'gen_ai.usage.input_tokens',
  genAiOutputTokens: 'gen_ai.usage.output_tokens',
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
} as const;
