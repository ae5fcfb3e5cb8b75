import { HEADERS, type CancelRunMessage, type PrincipalRevokedMessage, type Subjects } from '@ratchet/contracts';
import type { OutboxMessage } from '@ratchet/domain';

/** The code a revocation's stopped runs and paused schedules name, at the start of their reason. */
export const PRINCIPAL_REVOKED = 'principal.revoked';

/** The reason a revocation gives the runs it stops and the schedules it pauses. */
export function revocationReason(message: PrincipalRevokedMessage): string {
  const why = message.reason.trim();
  const what = message.scope === 'principal' ? message.principalId : `tokens of ${message.principalId}`;
  return `${PRINCIPAL_REVOKED}: ${what} revoked by ${message.by} at ${message.at}${why ? ` (${why})` : ''}`.slice(
    0,
    1000,
  );
}

/**
 * What a revocation does to the runs it found (PrincipalRevokedMessage): a `run.cancel` on each run's
 * thread inbox, as the revoker, with the reason `principal.revoked: …`; the run stops at its next step
 * like any cancelled run (a queued one never starts). Row ids derive from the revocation and the run, so
 * a revocation handled twice makes the same messages.
 */
export function revocationMessages(
  message: PrincipalRevokedMessage,
  runs: readonly { runId: string; threadId: string }[],
  subjects: Subjects,
): OutboxMessage[] {
  const reason = revocationReason(message);
  return runs.map((run) => {
    const cancel: CancelRunMessage = {
      kind: 'run.cancel',
      messageId: `${message.messageId}:${run.runId}`,
      tenantId: message.tenantId,
      threadId: run.threadId,
      runId: run.runId,
      by: message.by,
      reason,
    };
    return {
      id: cancel.messageId,
      subject: subjects.inbox(message.tenantId, run.threadId),
      payload: cancel,
      headers: { [HEADERS.messageType]: 'run.cancel', [HEADERS.tenant]: message.tenantId },
    };
  });
}
