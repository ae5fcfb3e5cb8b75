import { activeRunsOfPrincipal, SchedulesRepository, withServiceTx, type Database } from '@ratchet/adapters';
import type { PrincipalRevokedMessage, Subjects } from '@ratchet/contracts';
import type { OutboxMessage } from '@ratchet/domain';
import type { Logger } from '@ratchet/platform';
import type { Clock } from '../clock';
import { revocationMessages, revocationReason } from './revocation-messages';

/** What a revocation did: the runs it stopped and the schedules it paused. */
export interface RevocationOutcome {
  /** False: handled before (a redelivery); nothing was done again. */
  first: boolean;
  cancelled: string[];
  pausedSchedules: string[];
}

/**
 * Carries a revocation to the work the principal started (docs/security.md#revocation): in one
 * transaction, claims the message in the inbox (a redelivery does nothing), finds the principal's queued
 * and running runs and queues a `run.cancel` for each in the outbox, and — for a whole principal —
 * pauses its schedules with the reason; after the commit, publishes the cancels. A crash before the
 * commit leaves the message unacked, so it is handled again; after it, the relay publishes what is left.
 */
export class RevocationHandler {
  constructor(
    private readonly db: Database,
    private readonly relay: { publishCommitted(messages: readonly OutboxMessage[]): Promise<number> },
    private readonly subjects: Subjects,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly consumer: string,
  ) {}

  async handle(message: PrincipalRevokedMessage): Promise<RevocationOutcome> {
    const { outcome, rows } = await withServiceTx(this.db, async (tx) => {
      if (!(await tx.claimInbox(this.consumer, message.messageId)))
        return { outcome: { first: false, cancelled: [], pausedSchedules: [] }, rows: [] };
      const runs = await activeRunsOfPrincipal(
        tx,
        message.tenantId,
        message.principalId,
        message.scope === 'tokens' ? message.at : undefined,
      );
      const cancels = revocationMessages(message, runs, this.subjects);
      await tx.enqueue(cancels);
      const pausedSchedules =
        message.scope === 'principal'
          ? await new SchedulesRepository(tx).pauseOfPrincipal(
              message.tenantId,
              message.principalId,
              revocationReason(message),
              this.clock.now().toISOString(),
            )
          : [];
      return { outcome: { first: true, cancelled: runs.map((r) => r.runId), pausedSchedules }, rows: cancels };
    });
    if (rows.length > 0) await this.relay.publishCommitted(rows);
    if (outcome.first)
      this.logger.info(
        {
          tenantId: message.tenantId,
          principalId: message.principalId,
          scope: message.scope,
          revocation: message.messageId,
          cancelled: outcome.cancelled,
          pausedSchedules: outcome.pausedSchedules,
        },
        'principal revoked: its runs stop and its schedules pause',
      );
    return outcome;
  }
}
