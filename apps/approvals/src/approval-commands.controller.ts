import { Controller, Inject } from '@nestjs/common';
import { Ctx } from '@nestjs/microservices';
import { ApprovalCommand, RunStopNotice } from '@ratchet/contracts';
import { PoisonMessageError } from '@ratchet/domain';
import { ConsumesOnItsSubject, currentTraceContext, JetStreamContext, ServiceRuntime } from '@ratchet/platform';
import { ApprovalsService } from './approvals.service';

export const APPROVALS_CONSUMER = 'approvals';

/**
 * The approval command contract (or a run's stop notice), with a body that does not parse recorded as
 * `approval.invalid`.
 */
const approvalCommand = {
  parse(data: unknown): ApprovalCommand | RunStopNotice {
    const stop = RunStopNotice.safeParse(data);
    if (stop.success) return stop.data;
    const parsed = ApprovalCommand.safeParse(data);
    if (!parsed.success)
      throw new PoisonMessageError(`not an approval command: ${parsed.error.message}`, 'approval.invalid');
    return parsed.data;
  },
};

/**
 * `<prefix>.cmd.approval.<tenant>`: approval requests (a call waits for a human), escalations (an
 * uncertain effect waits for one) and the stop notices of runs that asked a human something (their
 * pending approvals close). Acked once the approval rows are committed; a re-send is a no-op.
 */
@Controller()
export class ApprovalCommandsController {
  constructor(
    @Inject(ApprovalsService) private readonly approvals: ApprovalsService,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
  ) {}

  @ConsumesOnItsSubject(APPROVALS_CONSUMER, approvalCommand, (s) => s.approvalCommands, 'approval')
  async onCommand(command: ApprovalCommand | RunStopNotice, @Ctx() ctx: JetStreamContext): Promise<void> {
    if (command.kind === 'run.stop') {
      // The run stopped while a human was asked something for it: what is still pending closes.
      const closed = await this.approvals.closeStoppedRun(command);
      this.runtime.logger.info(
        { tenantId: command.tenantId, runId: command.runId, closed },
        'run stopped: its pending approvals closed',
      );
      return;
    }
    // This consumer's span (telemetry on) or the request's context: the wait's span joins the run's trace.
    const traceparent = currentTraceContext()?.traceparent ?? ctx.getTraceparent();
    const result = await this.approvals.recordRequest(command, traceparent);
    this.runtime.logger.info(
      { approvalId: command.approvalId, kind: command.kind, tenantId: command.tenantId, result },
      'approval request recorded',
    );
  }
}
