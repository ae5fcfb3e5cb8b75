import type { WebhookDeliveryCommand } from '@ratchet/contracts';

/** What a receiver gets (docs/webhooks.md): the delivery id to dedup on, and how the run ended. */
export function webhookBody(c: WebhookDeliveryCommand): Record<string, unknown> {
  const o = c.outcome;
  return {
    deliveryId: c.deliveryId,
    type: 'run.ended',
    tenantId: c.tenantId,
    requestId: o.requestId,
    ...(o.threadId ? { threadId: o.threadId } : {}),
    ...(o.runId ? { runId: o.runId } : {}),
    status: o.status,
    ...(o.output !== undefined ? { output: o.output } : {}),
    ...(o.error ? { error: o.error } : {}),
    metadata: c.metadata,
  };
}
