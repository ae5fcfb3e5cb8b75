import type { BudgetName, Failure } from '@ratchet/contracts';
import { TENANT_CAP_CODE, TENANT_COST_CAP_CODE } from '../flow/tenant-caps';
import { workingMs } from './run.waits';
import type { ActiveRun } from './thread.state';

/**
 * A run's budgets (fixed on the run when it was requested, `RunLimits`) against what it has spent (the
 * fold of its log, `ActiveRun.spent`): pure, so a retry or a restart decides against the same numbers
 * and a budget is never exceeded by a decision made again.
 */
export interface BudgetBreach {
  budget: BudgetName;
  error: Failure;
}

/** What the run has spent so far (absent on runs folded before budgets existed: nothing counted). */
export function spentOf(run: ActiveRun): { modelCalls: number; tokens: number } {
  return run.spent ?? { modelCalls: 0, tokens: 0 };
}

/** Whether one more model call stays within the run's budgets at `at` (else the breach). */
export function beforeModelCall(run: ActiveRun, at: string): BudgetBreach | undefined {
  const limit = run.limits?.modelCalls;
  const made = spentOf(run).modelCalls;
  if (limit !== undefined && made + 1 > limit) {
    return breach('modelCalls', `the run made ${made} model calls, its budget (${limit}); it stops before another`);
  }
  return timeBudget(run, at) ?? tokens(run);
}

/** Whether the run is still within its budgets after what it just spent. */
export function afterSpending(run: ActiveRun, at: string): BudgetBreach | undefined {
  return tokens(run) ?? timeBudget(run, at);
}

/**
 * The run's time budget alone (also the watchdog's check on a run with nothing in flight to notice): its
 * working time (`workingTimeSeconds`: every named wait left out, `run.waits.ts`), or for runs requested
 * before working time was counted, its wall time (`wallTimeSeconds`), so a log replays as it was decided.
 * A run that waits is never over its working time: its clock stands still until the wait ends.
 */
export function timeBudget(run: ActiveRun, at: string): BudgetBreach | undefined {
  if (!run.startedAt) return undefined;
  const working = run.limits?.workingTimeSeconds;
  if (working !== undefined) {
    const seconds = workingMs(run, at) / 1000;
    if (seconds <= working) return undefined;
    const waited = (Date.parse(at) - Date.parse(run.startedAt)) / 1000 - seconds;
    return breach(
      'workingTime',
      `the run has worked ${tenthsUp(seconds)} s (${tenths(waited)} s of waiting not counted), past its working-time budget of ${working} s`,
    );
  }
  const limit = run.limits?.wallTimeSeconds;
  if (limit === undefined) return undefined;
  const seconds = (Date.parse(at) - Date.parse(run.startedAt)) / 1000;
  if (seconds <= limit) return undefined;
  return breach('wallTime', `the run has taken ${Math.round(seconds)} s, past its wall-time budget of ${limit} s`);
}

/** Seconds to the nearest tenth (5.3, or 6 when whole). */
function tenths(seconds: number): string {
  return String(Math.round(seconds * 10) / 10);
}

/** Seconds rounded up to a tenth: a run 5.02 s into a 5 s budget reads 5.1, never as within it (5). */
function tenthsUp(seconds: number): string {
  return String(Math.ceil(Math.round(seconds * 1000) / 100) / 10);
}

function tokens(run: ActiveRun): BudgetBreach | undefined {
  const limit = run.limits?.tokens;
  const used = spentOf(run).tokens;
  if (limit === undefined || used <= limit) return undefined;
  return breach('tokens', `the run has used ${used} tokens, past its budget of ${limit}`);
}

/**
 * The run's model call was refused by its tenant's token or cost cap (`TENANT_CAP_CODE`,
 * `TENANT_COST_CAP_CODE`; docs/flow-control.md "Token and cost caps"): the run stops over the tenant's
 * budget, with the refusal's words.
 */
export function tenantCapBreach(error: Failure): BudgetBreach | undefined {
  if (error.code === TENANT_CAP_CODE) return breach('tenantTokens', error.message);
  if (error.code === TENANT_COST_CAP_CODE) return breach('tenantCost', error.message);
  return undefined;
}

function breach(budget: BudgetName, message: string): BudgetBreach {
  return {
    budget,
    error: { code: 'budget.exceeded', message: `${budgetLabel(budget)}: ${message}`, retryable: false },
  };
}

function budgetLabel(budget: BudgetName): string {
  switch (budget) {
    case 'modelCalls':
      return 'model-call budget';
    case 'tokens':
      return 'token budget';
    case 'wallTime':
      return 'wall-time budget';
    case 'workingTime':
      return 'working-time budget';
    case 'tenantTokens':
      return 'tenant token cap';
    case 'tenantCost':
      return 'tenant cost cap';
    default: {
      const unknown: never = budget;
      return unknown;
    }
  }
}
