import { Controller, Inject } from '@nestjs/common';
import { PrincipalRevokedMessage } from '@ratchet/contracts';
import { RevocationHandler, type Clock } from '@ratchet/jobs';
import { ConsumesOnItsSubject, ServiceRuntime } from '@ratchet/platform';
import { SCHEDULE_CLOCK } from '../schedules/schedules.responder';

export const REVOCATIONS_CONSUMER = 'orchestrator-revocations';

/**
 * A principal's revocation (an API key, a JWT subject or some of its tokens), announced by whoever
 * revoked it: the principal's queued and running runs are cancelled with `principal.revoked`, and its
 * schedules paused (RevocationHandler). Acked only after that is committed.
 */
@Controller()
export class RevocationCommandsController {
  private readonly handler: RevocationHandler;

  constructor(@Inject(ServiceRuntime) runtime: ServiceRuntime, @Inject(SCHEDULE_CLOCK) clock: Clock) {
    this.handler = new RevocationHandler(
      runtime.db,
      runtime.relay,
      runtime.subjects,
      clock,
      runtime.logger,
      REVOCATIONS_CONSUMER,
    );
  }

  @ConsumesOnItsSubject(REVOCATIONS_CONSUMER, PrincipalRevokedMessage, (s) => s.revocationCommands, 'revocation')
  async onRevoked(message: PrincipalRevokedMessage): Promise<void> {
    await this.handler.handle(message);
  }
}
