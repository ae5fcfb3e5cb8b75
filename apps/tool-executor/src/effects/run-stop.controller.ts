import { Controller, Inject } from '@nestjs/common';
import { EffectLedgerRepository } from '@ratchet/adapters';
import { RunStopNotice } from '@ratchet/contracts';
import { ConsumesOnItsSubject, RunStops, ServiceRuntime } from '@ratchet/platform';

export const CONTROL_CONSUMER = 'tool-executor-control';

/**
 * Run-stop notices (`<prefix>.cmd.control.<tenant>`), on a consumer of their own so they never wait
 * behind the tool calls they stop. Recorded before the ack: from then on no executor starts a call of
 * that run (the claim checks the record); this process also aborts the calls it is making for it (the
 * others heard the core broadcast).
 */
@Controller()
export class RunStopController {
  constructor(
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Inject(RunStops) private readonly stops: RunStops,
  ) {}

  @ConsumesOnItsSubject(CONTROL_CONSUMER, RunStopNotice, (s) => s.controlCommands, 'control')
  async onNotice(notice: RunStopNotice): Promise<void> {
    await new EffectLedgerRepository(this.runtime.db.sql).recordStoppedRun(notice);
    this.stops.stop(notice.tenantId, notice.runId, notice.reason);
  }
}
