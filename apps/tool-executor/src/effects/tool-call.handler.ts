import {
  HEADERS,
  ToolCallCommand,
  type Subjects,
  type ToolResolveCommand,
  type ToolResultMessage,
} from '@ratchet/contracts';
import {
  EffectLedgerRepository,
  withServiceTx,
  type Database,
  type EffectHolder,
  type EffectRecord,
  type StartEffect,
} from '@ratchet/adapters';
import {
  decideEffect,
  InvariantError,
  PoisonMessageError,
  prepareEffect,
  redactSecrets,
  TransientError,
  type Clock,
  type LedgerSnapshot,
  type CommittedPublisher,
  type EffectKind,
  type IdSource,
  type OutboxMessage,
} from '@ratchet/domain';
import {
  ATTR,
  currentTraceContext,
  LINK,
  linkActiveSpan,
  linkTo,
  randomIds,
  systemClock,
  type RunStops,
} from '@ratchet/platform';
import {
  callKind,
  runTool,
  toolContext,
  type AnyTool,
  type ToolLogger,
  type ToolLookup,
  type ToolRunOutcome,
  type ToolServices,
} from '@ratchet/tools';
import { crashPoint } from './crash-points';
import type { EffectLeases } from './effect-leases';

export type ToolCallResult =
  | 'executed'
  | 'dedup'
  | 'retried'
  | 'escalated'
  | 'reconciled'
  /** The run had stopped before the call started: recorded `cancelled`, no effect. */
  | 'cancelled'
  /** Another executor is acting on the call right now: left to it. */
  | 'in-progress';
export type ToolResolveResult = 'resolved' | 'retried' | 'dedup' | 'not-found' | 'not-uncertain';

type Outcome = ToolResultMessage['outcome'];

/**
 * The effect ledger around every tool call (architecture §6). For idempotent and at-most-once tools,
 * `started` is committed before the tool acts; the outcome and the result message commit together
 * afterwards. A pure tool may repeat, so nothing is written before it acts: its row is inserted with the
 * outcome and the result message in one statement. A redelivery reads the ledger and never blindly
 * repeats an effect that may have happened.
 */
/** How the executor learns that runs stopped, and holds the effects it acts on. */
export interface RunControl {
  /** Runs this process heard stopped, and the calls it is making for each (aborted when one stops). */
  stops: RunStops;
  /** The leases of the `started` effects this process acts on, renewed while the tools run. */
  leases: EffectLeases;
  /** Resolves once the run-stop notices waiting at start were handled (see ControlGate). */
  ready?: Promise<void>;
}

export class ToolCallHandler {
  private readonly services: ToolServices;
  private readonly holder: EffectHolder | undefined;

  constructor(
    private readonly db: Database,
    /** Per tenant: built-in tools, tool modules, remote tool services and MCP servers (ToolCatalog). */
    private readonly tools: ToolLookup,
    private readonly relay: CommittedPublisher,
    private readonly subjects: Subjects,
    logger: ToolLogger,
    services: Omit<ToolServices, 'logger'> = {},
    private readonly control?: RunControl,
    /** The composition root's clock and ids (leases left, resend row ids). */
    private readonly time: { clock: Clock; ids: IdSource } = { clock: systemClock, ids: randomIds },
  ) {
    this.services = { ...services, logger };
    this.holder = control?.leases.holder;
  }

  /**
   * One delivery of a tool call. `deliveryCount` is JetStream's (1 on the first delivery): a pure call
   * reads the ledger before it runs only when it was delivered before (see `prepareEffect`).
   */
  async handle(
    command: ToolCallCommand,
    traceHeaders: Record<string, string>,
    deliveryCount = 1,
  ): Promise<ToolCallResult> {
    if (this.control?.ready) await this.control.ready;
    const tool = await this.tools.resolve(command.tenantId, command.tool);
    // The kind of this call (a tool may decide it from the arguments, e.g. http.request's method).
    // A tool no source offers any more is looked up in the ledger below: an earlier attempt's kind rules.
    const kind = tool ? callKind(tool, command.args, command.toolConfig) : 'pure';
    await crashPoint('tools.before-started');
    // This attempt's span (telemetry on) or the command's context: what a later attempt links to.
    const traceparent = currentTraceContext()?.traceparent ?? traceHeaders[HEADERS.traceparent];
    const effect: StartEffect = {
      key: command.idempotencyKey,
      tenantId: command.tenantId,
      threadId: command.threadId,
      runId: command.runId,
      callId: command.callId,
      tool: command.tool,
      kind,
      command,
      traceparent,
    };
    const ledger = new EffectLedgerRepository(this.db.sql);
    const preparation = prepareEffect(kind, deliveryCount);
    // A call of a run this process heard stopped is never started (the run's end was committed first).
    if (this.control?.stops.wasStopped(command.tenantId, command.runId))
      return this.cancel(command, traceHeaders, effect);
    // A pure call on its first delivery: nothing before it runs; outcome + message in one statement after.
    if (preparation === 'run') return this.execute(command, traceHeaders, effect, 'executed', tool);
    // A pure call delivered again: read what an earlier delivery recorded (nothing is written before it runs).
    // Any other call: claim the key (committed on its own: the claim must be durable before anything
    // acts; one statement, so no transaction around it: autocommit makes it durable before the tool acts).
    // The claim also checks the runs the executor knows stopped: a call of one is never started.
    const found =
      preparation === 'look-up'
        ? await ledger.get(effect.key, this.holder?.holder)
        : await ledger.recordStarted(effect, this.holder);
    if (found === 'stopped') return this.cancel(command, traceHeaders, effect);
    const existing: EffectRecord | undefined = found === 'inserted' ? undefined : found;
    this.checkTenant(command, existing);
    if (!tool && existing?.state === 'started' && existing.kind !== 'pure' && !existing.heldElsewhere) {
      // An earlier attempt may have acted, and no source offers the tool now (its service went away):
      // nothing can retry or reconcile it, so a human decides — never a failure the model would redo.
      await this.escalate(command, traceHeaders, existing, `no source offers ${command.tool} any more`);
      return 'escalated';
    }
    // What an earlier attempt recorded rules: a source that changed its tool's kind since cannot loosen it.
    const action = decideEffect(
      existing?.state,
      recordedKind(existing) ?? kind,
      tool?.reconcile !== undefined,
      existing?.heldElsewhere,
    );
    if (existing) this.linkToClaim(existing);

    switch (action) {
      case 'resend': {
        await this.finish(command, traceHeaders, 'dedup', storedOutcome(existing));
        return 'dedup';
      }
      case 'wait':
        return this.inProgress(existing, deliveryCount);
      case 'escalate': {
        await this.escalate(command, traceHeaders, existing);
        return 'escalated';
      }
      case 'reconcile': {
        if (!tool?.reconcile)
          throw new InvariantError('reconcile decided for a tool without a hook', 'effect.no_reconcile');
        const parsed = tool.input.safeParse(command.args);
        const answer = parsed.success
          ? await tool.reconcile(
              parsed.data,
              toolContext(command, this.services, AbortSignal.timeout(tool.timeoutMs), 1),
            )
          : { happened: false as const };
        if (answer.happened) {
          const outcome: Outcome = { status: 'completed', result: answer.result };
          await this.finish(command, traceHeaders, 'succeeded', outcome, undefined, undefined, claimOf(existing));
          return 'reconciled';
        }
        const attempt = await ledger.recordAttempt(command.idempotencyKey, traceparent, this.holder);
        if (attempt === undefined)
          return this.inProgress(await ledger.get(command.idempotencyKey, this.holder?.holder), deliveryCount);
        return this.execute(command, traceHeaders, undefined, 'reconciled', tool, {
          state: 'started',
          attempts: attempt,
        });
      }
      case 'retry':
        // A pure call's attempt is counted when its outcome is recorded (nothing is written before it runs).
        if (preparation === 'look-up') return this.execute(command, traceHeaders, effect, 'retried', tool);
        // Taken only if nobody else took it meanwhile: two deliveries never retry one effect at once.
        {
          const attempt = await ledger.recordAttempt(command.idempotencyKey, traceparent, this.holder);
          if (attempt === undefined)
            return this.inProgress(await ledger.get(command.idempotencyKey, this.holder?.holder), deliveryCount);
          return this.execute(command, traceHeaders, undefined, 'retried', tool, {
            state: 'started',
            attempts: attempt,
          });
        }
      case 'execute':
        // Nothing was there: this delivery's claim inserted the row, as attempt 1.
        return preparation === 'look-up'
          ? this.execute(command, traceHeaders, effect, 'executed', tool)
          : this.execute(command, traceHeaders, undefined, 'executed', tool, { state: 'started', attempts: 1 });
      default: {
        const unknown: never = action;
        return unknown;
      }
    }
  }

  /**
   * Another executor holds the effect (its lease runs). A new message for the call (a command re-sent
   * while the first still acts) is left to it: if that holder died, its own message comes back when the
   * bus's ack wait runs out. A redelivered message, though, may be the dead holder's own: it comes back
   * once the lease has run out, and is decided again then (finished: re-sent; still started: retried,
   * reconciled or escalated).
   */
  private inProgress(existing: EffectRecord | undefined, deliveryCount: number): ToolCallResult {
    if (deliveryCount <= 1) return 'in-progress';
    const leaseLeftMs = existing?.leaseUntil
      ? Math.max(0, Date.parse(existing.leaseUntil) - this.time.clock.now().getTime())
      : 0;
    throw new TransientError(
      `effect ${existing?.key ?? '?'} is held by ${existing?.leasedBy ?? 'another executor'}; looking again when its lease runs out`,
      'tool.in_progress',
      { retryAfterMs: leaseLeftMs + 500 },
    );
  }

  /**
   * A call of a stopped run that never started: its effect is recorded `cancelled` (no effect) and the
   * thread told, so the ledger, the thread and the outside world agree. When another delivery got to the
   * key first, what it recorded is answered instead.
   */
  private async cancel(
    command: ToolCallCommand,
    traceHeaders: Record<string, string>,
    effect: StartEffect,
  ): Promise<ToolCallResult> {
    const outcome: Outcome = { status: 'cancelled', reason: 'the run stopped before this call started; it never ran' };
    const row = this.resultRow(command, traceHeaders, outcome, false);
    const ledger = new EffectLedgerRepository(this.db.sql);
    if (await ledger.recordCancelled(effect, outcome, row)) {
      await this.relay.publishCommitted([row]);
      return 'cancelled';
    }
    const existing = await ledger.get(effect.key, this.holder?.holder);
    this.checkTenant(command, existing);
    if (!existing || existing.state === 'started') return 'in-progress';
    if (existing.state === 'uncertain') {
      await this.escalate(command, traceHeaders, existing);
      return 'escalated';
    }
    await this.finish(command, traceHeaders, 'dedup', storedOutcome(existing));
    return 'dedup';
  }

  /**
   * A human's answer to an `uncertain` effect. Recorded in the ledger only while the effect is still
   * `uncertain` (a repeated or late answer changes nothing, and re-sends what the ledger holds).
   */
  async resolve(command: ToolResolveCommand, traceHeaders: Record<string, string>): Promise<ToolResolveResult> {
    const ledger = new EffectLedgerRepository(this.db.sql);
    const record = await ledger.get(command.idempotencyKey);
    // Another tenant's key reads as missing (architecture §8).
    if (!record || record.tenantId !== command.tenantId) return 'not-found';
    const call = ToolCallCommand.safeParse(record.command);
    if (!call.success) return 'not-found';
    if (record.state !== 'uncertain') {
      if (record.state === 'started') return 'not-uncertain';
      await this.finish(call.data, traceHeaders, 'dedup', storedOutcome(record));
      return 'dedup';
    }
    const r = command.resolution;
    if (r.decision === 'retry') {
      const claim = await withServiceTx(this.db, (tx) =>
        new EffectLedgerRepository(tx).recordResolution(command.tenantId, command.idempotencyKey, 'retry', command.by),
      );
      if (!claim) return 'not-uncertain';
      // Back to `started` with one more attempt, committed before it runs again: a crash now escalates again.
      await this.execute(
        call.data,
        traceHeaders,
        undefined,
        'retried',
        await this.tools.resolve(command.tenantId, record.tool),
        claim,
      );
      return 'retried';
    }
    const outcome: Outcome =
      r.decision === 'happened'
        ? { status: 'completed', result: r.result }
        : {
            status: 'failed',
            error: {
              code: 'effect.failed_by_human',
              message: `${record.tool}: ${command.by} decided the call failed${r.reason ? `: ${r.reason}` : ''}`,
              retryable: false,
            },
          };
    const row = this.resultRow(call.data, traceHeaders, outcome, false);
    const ok = await withServiceTx(this.db, async (tx) => {
      const done = await new EffectLedgerRepository(tx).recordResolution(
        command.tenantId,
        command.idempotencyKey,
        r.decision,
        command.by,
        outcome,
      );
      if (done) await tx.enqueue([row]);
      return done !== undefined;
    });
    if (!ok) return 'not-uncertain';
    await this.relay.publishCommitted([row]);
    return 'resolved';
  }

  /**
   * Runs the tool and records what came of it. Without `pure`, the ledger says `started` (committed
   * before this runs). With `pure` (the call's ledger row, not written yet), the outcome is recorded
   * with the row in one statement; when another delivery recorded an outcome first, that one is re-sent
   * and this one dropped (a pure tool may repeat; its result reaches the thread once). Without `pure`,
   * `claim` is the row as this attempt holds it: its outcome is recorded only while it still does.
   */
  private async execute(
    command: ToolCallCommand,
    traceHeaders: Record<string, string>,
    pure: StartEffect | undefined,
    result: ToolCallResult,
    tool: AnyTool | undefined,
    claim?: LedgerSnapshot,
  ): Promise<ToolCallResult> {
    const outcome: ToolRunOutcome = tool
      ? await this.acting(command, callKind(tool, command.args, command.toolConfig), pure === undefined, (stop) =>
          runTool(tool, command, this.services, stop),
        )
      : {
          status: 'failed',
          error: { code: 'unknown_tool', message: `no tool named ${command.tool} is registered`, retryable: false },
        };
    await crashPoint('tools.after-effect');
    let recorded: 'recorded' | EffectRecord;
    if (outcome.status === 'uncertain') {
      this.services.logger.warn('effect uncertain: escalated', { key: command.idempotencyKey, tool: command.tool });
      const notice = uncertain(command, outcome.reason);
      recorded = await this.finish(command, traceHeaders, 'uncertain', notice, pure, tool, claim);
    } else {
      const state = outcome.status === 'completed' ? 'succeeded' : 'failed';
      recorded = await this.finish(command, traceHeaders, state, outcome, pure, tool, claim);
    }
    if (recorded === 'recorded') return result;
    // The row moved on while this attempt acted (a human answered it, or a newer attempt holds it), or
    // another delivery of this pure call recorded its outcome first: what the row holds stands.
    this.checkTenant(command, recorded);
    if (!pure && recorded.state === 'started') return 'in-progress';
    this.linkToClaim(recorded);
    const action = decideEffect(recorded.state, 'pure', false);
    switch (action) {
      case 'resend':
        await this.finish(command, traceHeaders, 'dedup', storedOutcome(recorded));
        return 'dedup';
      case 'escalate':
        await this.escalate(command, traceHeaders, recorded);
        return 'escalated';
      // Not reachable (the statement finishes a `started` row of this tenant); if it were, the message is
      // redelivered and its look-up decides again.
      case 'execute':
      case 'wait':
      case 'retry':
      case 'reconcile':
        throw new TransientError(
          `effect ${command.idempotencyKey} is still ${recorded.state} after recording its outcome`,
          'effect.unsettled',
        );
      default: {
        const unknown: never = action;
        throw new InvariantError(`unknown effect action ${String(unknown)}`, 'effect.unknown_action');
      }
    }
  }

  /**
   * Runs the tool, and (for a claimed effect) keeps its lease renewed while it acts, so another delivery
   * meanwhile leaves it alone. A pure call is aborted when its run stops (nothing is lost: it has no
   * effect). A call with an effect that is already acting is left to finish: interrupting an effect
   * midway is what makes its outcome unknowable, and its real outcome is recorded after the run's end.
   */
  private async acting<T>(
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

  /** Tells the thread (again) that the effect is uncertain; only a human's answer moves it on. */
  private async escalate(
    command: ToolCallCommand,
    traceHeaders: Record<string, string>,
    existing: EffectRecord | undefined,
    why = `${command.tool} (${existing?.kind ?? 'at-most-once'}) cannot be repeated`,
  ): Promise<void> {
    await this.finish(
      command,
      traceHeaders,
      existing?.state === 'uncertain' ? 'resend' : 'uncertain',
      uncertain(command, `an earlier attempt of ${command.tool} stopped after it may have acted; ${why}`),
      undefined,
      undefined,
      claimOf(existing),
    );
  }

  private checkTenant(command: ToolCallCommand, existing: EffectRecord | undefined): void {
    if (existing && existing.tenantId !== command.tenantId) {
      // A key is derived from the tenant, so this is a forged or corrupt command: never answer across tenants.
      throw new PoisonMessageError(
        `effect ${command.idempotencyKey} belongs to another tenant`,
        'effect.tenant_mismatch',
      );
    }
  }

  /** An earlier attempt claimed the key: this one (retry, reconcile, escalation or dedup) points at it. */
  private linkToClaim(existing: EffectRecord): void {
    linkActiveSpan(
      linkTo(existing.traceparent, { [ATTR.linkReason]: LINK.ledgerClaim, [ATTR.attempt]: existing.attempts }),
    );
  }

  /**
   * Records the outcome (or the dedup hit) and the result message in one transaction, then publishes.
   * `resend`: only the message (an uncertain notice again); `dedup`: the message and a dedup hit.
   * `pure` (a pure call's row, not written yet): the row is inserted with its outcome and the message,
   * in one statement; when an outcome was already there, nothing is written or published and that row
   * is returned for the caller to re-send. Otherwise the outcome is recorded only while the row is as
   * `claim` says (compare and set): a row that moved on meanwhile is returned, and nothing is sent.
   */
  private async finish(
    command: ToolCallCommand,
    traceHeaders: Record<string, string>,
    record: 'succeeded' | 'failed' | 'uncertain' | 'dedup' | 'resend',
    raw: Outcome,
    pure?: StartEffect,
    tool?: AnyTool,
    claim?: LedgerSnapshot,
  ): Promise<'recorded' | EffectRecord> {
    // Secret-looking values (and fields the tool marks sensitive) never reach the ledger or the thread.
    const outcome = redactSecrets(raw, tool?.sensitive ?? []);
    const repeat = record === 'dedup' || record === 'resend';
    const row = this.resultRow(command, traceHeaders, outcome, repeat);
    if (record === 'dedup' || record === 'resend') {
      await withServiceTx(this.db, async (tx) => {
        if (record === 'dedup') await new EffectLedgerRepository(tx).recordDedupHit(command.idempotencyKey);
        await tx.enqueue([row]);
      });
    } else {
      const result = record === 'uncertain' ? null : outcome;
      const ledger = new EffectLedgerRepository(this.db.sql);
      // The outcome and its message in one statement: one round trip, both or neither.
      if (pure) {
        const recorded = await ledger.recordPureOutcome(pure, record, result, row);
        if (recorded !== 'recorded') return recorded;
      } else {
        if (!claim)
          throw new PoisonMessageError(
            `effect ${command.idempotencyKey}: an outcome without the claim it ends`,
            'effect.unclaimed',
          );
        const recorded = await ledger.recordOutcomeWithMessage(command.idempotencyKey, record, result, row, claim);
        if (recorded !== 'recorded') {
          this.services.logger.warn('effect moved on while this attempt acted: its outcome is dropped', {
            key: command.idempotencyKey,
            attempt: claim.attempts,
            now: recorded.state,
          });
          return recorded;
        }
      }
      await crashPoint('tools.after-outcome');
    }
    await this.relay.publishCommitted([row]);
    return 'recorded';
  }

  private resultRow(
    command: ToolCallCommand,
    traceHeaders: Record<string, string>,
    outcome: Outcome,
    repeat: boolean,
  ): OutboxMessage {
    const message: ToolResultMessage = {
      kind: 'tool.result',
      // One id per outcome: a resend is deduped downstream, an uncertain notice and its later answer are not.
      messageId: `${command.idempotencyKey}:result:${outcome.status}`,
      tenantId: command.tenantId,
      threadId: command.threadId,
      runId: command.runId,
      step: command.step,
      callId: command.callId,
      outcome,
    };
    return {
      // A resend gets a row of its own (the first row may be long sent and pruned); the orchestrator's
      // inbox dedups by the message id in the body, forever.
      id:
        repeat || outcome.status === 'uncertain'
          ? `${message.messageId}:resend:${this.time.ids.next('r')}`
          : message.messageId,
      subject: this.subjects.inbox(command.tenantId, command.threadId),
      payload: message,
      headers: { ...traceHeaders, [HEADERS.messageType]: 'tool.result', [HEADERS.tenant]: command.tenantId },
    };
  }
}

function recordedKind(existing: EffectRecord | undefined): EffectKind | undefined {
  const k = existing?.kind;
  return k === 'pure' || k === 'idempotent' || k === 'at-most-once' ? k : undefined;
}

/** The row as the delivery read it: what a write decided on it must still find. */
function claimOf(existing: EffectRecord | undefined): LedgerSnapshot | undefined {
  return existing && { state: existing.state, attempts: existing.attempts };
}

function uncertain(command: ToolCallCommand, reason: string): Outcome {
  return { status: 'uncertain', idempotencyKey: command.idempotencyKey, reason: `${reason}; a human must decide` };
}

function storedOutcome(record: EffectRecord | undefined): Outcome {
  const stored = record?.result as Outcome | null | undefined;
  if (stored && (stored.status === 'completed' || stored.status === 'failed' || stored.status === 'cancelled'))
    return stored;
  return {
    status: 'failed',
    error: {
      code: 'ledger.missing_result',
      message: 'the effect finished but its result was not stored',
      retryable: false,
    },
  };
}
