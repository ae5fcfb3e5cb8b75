import { Module, type DynamicModule } from '@nestjs/common';
import { RuntimeModule, ServiceRuntime, systemClock } from '@ratchet/platform';
import { ApprovalCommandsController } from './approval-commands.controller';
import { ApprovalsApiResponder } from './approvals-api.responder';
import { ApprovalsService } from './approvals.service';
import { ExpirySweeper, SWEEP_INTERVAL } from './expiry-sweeper';
import { observePendingApprovals } from './pending-approvals.gauge';
import { RunStopListener } from './run-stop.listener';
import { WaitpointCompletionsResponder } from './waitpoint-completions.responder';

@Module({})
export class ApprovalsModule {
  static create(runtime: ServiceRuntime, options: { sweepIntervalMs: number }): DynamicModule {
    return {
      module: ApprovalsModule,
      imports: [RuntimeModule.forRuntime(runtime)],
      controllers: [ApprovalCommandsController],
      providers: [
        {
          provide: ApprovalsService,
          useFactory: () => {
            observePendingApprovals(runtime.db);
            return new ApprovalsService(runtime.db, runtime.relay, runtime.subjects, systemClock);
          },
        },
        { provide: SWEEP_INTERVAL, useValue: options.sweepIntervalMs },
        ApprovalsApiResponder,
        WaitpointCompletionsResponder,
        ExpirySweeper,
        RunStopListener,
      ],
    };
  }
}
