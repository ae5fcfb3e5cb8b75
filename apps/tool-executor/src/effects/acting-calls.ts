import type { ToolCallCommand } from '@ratchet/contracts';
import type { EffectKind } from '@ratchet/domain';
import type { RunStops } from '@ratchet/platform';
import type { EffectLeases } from './effect-leases';

/** How the executor learns that runs stopped, and holds the effects it acts on. */
export interface RunControl {
  /** Runs this process heard stopped, and the calls it is making for each (aborted when one stops). */
  stops: RunStops;
  /** The leases of the `started` effects this process acts on, renewed while the tools run. */
  leases: EffectLeases;
  /** Resolves once the run-stop notices waiting at start were handled (see ControlGate). */
  ready?: Promise<void>;
  /**
   * An idempotent call's first delivery acts at once, and its `started` row is written only once it has
   * acted this long (DeferredClaim, ADR 0043). Undefined: `started` is committed before it acts.
   */
  claimAfterMs?: number;
}

/**
 * The calls this process is acting on, each run under its run's control: a pure call is aborted when its
 * run stops; a claimed effect keeps its lease renewed while it acts.
 */
export class ActingCalls {
  private readonly keys = new Set<string>();

  constructor(private readonly control?: RunControl) {}

  /** Whether this process is acting on the call right now. */
  has(key: string): boolean {
    return this.keys.has(key);
  }

  /**
   * Runs the tool, and (for a claimed effect) keeps its lease renewed while it acts, so another delivery
   * meanwhile leaves it alone. A pure call is aborted when its run stops (nothing is lost: it has no
   * effect). A call with an effect that is already acting is left to finish: interrupting an effect
   * midway is what makes its outcome unknowable, and its real outcome is recorded after the run's end.
   */
  async run<T>(
    command: ToolCallCommand,
    kind: EffectKind,
    claimed: boolean,
    run: (stop?: AbortSignal) => Promise<T>,
  ): Promise<T> {
    this.keys.add(command.idempotencyKey);
    try {
      return await this.controlled(command, kind, claimed, run);
    } finally {
      this.keys.delete(command.idempotencyKey);
    }
  }

  private async controlled<T>(
    command: ToolCallCommand,
    kind: EffectKind,
    claimed: boolean,
    run: (stop?: AbortSignal) => Promise<T>,
  ): Promise<T> {
    if (!this.control) return run();
    const controller = new AbortController();
    const untrack = kind === 'pure' ? this.control.stops.track(command.tenantId, command.runId, controller) : undefined;
    const release = claimed ? this.control.leases.hold(command.idempotencyKey) : undefined;
    try {
      return await run(kind === 'pure' ? controller.signal : undefined);
    } finally {
      untrack?.();
      release?.();
    }
  }
}
