import { HEADERS, Waitpoint, type Subjects, type ToolCallCommand, type ToolResolveCommand } from '@ratchet/contracts';
import {
  EffectLedgerRepository,
  type Database,
  type EffectHolder,
  type EffectRecord,
  type StartEffect,
} from '@ratchet/adapters';
import {
  decideEffect,
  InvariantError,
  prepareEffect,
  TransientError,
  type Clock,
  type CommittedPublisher,
  type IdSource,
  type LedgerSnapshot,
  type PendingMarks,
} from '@ratchet/domain';
import { currentTraceContext, randomIds, systemClock } from '@ratchet/platform';
import {
  abandonedAttempts,
  callKind,
  DEFAULT_ABORT_GRACE_MS,
  runTool,
  toolContext,
  type AnyTool,
  type ToolLogger,
  type ToolLookup,
  type ToolRunOutcome,
  type ToolServices,
} from '@ratchet/tools';
import { ActingCalls, type RunControl } from './acting-calls';
import { crashPoint } from './crash-points';
import { DeferredClaim } from './deferred-claim';
import { claimOf, EffectRecorder, recordedKind, storedOutcome, uncertain, type Outcome } from './effect-recorder';
import { EffectResolution, type ToolResolveResult } from './effect-resolution';

export type { ToolResolveResult } from './effect-resolution';

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

/**
 * The effect ledger around every tool call (architecture §6). For at-most-once tools, `started` is
 * committed before the tool acts; the outcome and the result message commit together afterwards. A pure
 * tool may repeat, so nothing is written before it acts: its row is inserted with the outcome and the
 * result message in one statement. An idempotent call's first delivery does the same unless it is still
 * acting after `claimAfterMs`, when its `started` row is written while it acts (ADR 0043); a redelivery
 * of it claims first. A redelivery reads the ledger and never blindly repeats an effect that may have
 * happened.
 *
 * This file claims and decides (`handle`) and acts (`execute`); what is recorded once a call ended is
 * `EffectRecorder`'s, a human's answer to an uncertain effect is `EffectResolution`'s.
 */
export class ToolCallHandler {
  private readonly services: ToolServices;
  private readonly holder: EffectHolder | undefined;
  private readonly record: EffectRecorder;
  private readonly resolution: EffectResolution;
  /** The calls this process is acting on right now (a delivery of one of them waits; see `handle`). */
  private readonly acting: ActingCalls;

  constructor(
    private readonly db: Database,
    /** Per tenant: built-in tools, tool modules, remote tool services and MCP servers (ToolCatalog). */
    private readonly tools: ToolLookup,
    private readonly relay: CommittedPublisher,
    subjects: Subjects,
    logger: ToolLogger,
    services: Omit<ToolServices, 'logger'> = {},
    private readonly control?: RunControl,
    /** The composition root's clock and ids (leases left, resend row ids). */
    private readonly time: { clock: Clock; ids: IdSource } = { clock: systemClock, ids: randomIds },
    /** The relay's published rows waiting to be marked sent (outcome statements take them along). */
    marks?: PendingMarks,
  ) {
    this.services = { now: () => time.clock.now(), ...services, logger };
    this.holder = control?.leases.holder;
    this.acting = new ActingCalls(control);
    this.record = new EffectRecorder(db, relay, subjects, logger, time.ids, marks);
    this.resolution = new EffectResolution(db, tools, relay, this.record, (call, trace, tool, claim) =>
      this.execute(call, trace, undefined, 'retried', tool, claim),
    );
  }

  /**
   * A human's answer to an `uncertain` effect. Recorded in the ledger only while the effect is still
   * `uncertain` (a repeated or late answer changes nothing, and re-sends what the ledger holds).
   */
  resolve(command: ToolResolveCommand, traceHeaders: Record<string, string>): Promise<ToolResolveResult> {
    return this.resolution.resolve(command, traceHeaders);
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
    // An abandoned attempt of this call still runs here: no second attempt, and no ledger row touched.
    (this.services.abandoned ?? abandonedAttempts).assertNoneRunning(
      command.idempotencyKey,
      this.services.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS,
    );
    // This process is acting on the call: its message came back meanwhile (the bus's ack wait ran out
    // while the heartbeats were held up), or it was sent again. Never a second attempt beside the first,
    // in the same process, where the lease cannot tell them apart.
    if (this.acting.has(command.idempotencyKey)) {
      if (deliveryCount <= 1) return 'in-progress';
      throw new TransientError(
        `effect ${command.idempotencyKey} is acting in this executor; looking again later`,
        'tool.in_progress',
        { retryAfterMs: (this.holder?.leaseMs ?? 1000) + 500 },
      );
    }
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
    const preparation = prepareEffect(kind, deliveryCount, this.control?.claimAfterMs !== undefined);
    // A call of a run this process heard stopped is never started (the run's end was committed first).
    if (this.control?.stops.wasStopped(command.tenantId, command.runId))
      return this.cancel(command, traceHeaders, effect);
    // A pure call on its first delivery: nothing before it runs; outcome + message in one statement after.
    // An idempotent one likewise, unless it is still acting after `claimAfterMs` (see `execute`).
    if (preparation === 'run' || preparation === 'defer-claim')
      return this.execute(command, traceHeaders, effect, 'executed', tool);
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
    this.record.checkTenant(command, existing);
    if (!tool && existing?.state === 'started' && existing.kind !== 'pure' && !existing.heldElsewhere) {
      // An earlier attempt may have acted, and no source offers the tool now (its service went away):
      // nothing can retry or reconcile it, so a human decides — never a failure the model would redo.
      await this.record.escalate(command, traceHeaders, existing, `no source offers ${command.tool} any more`);
      return 'escalated';
    }
    // What an earlier attempt recorded rules: a source that changed its tool's kind since cannot loosen it.
    const action = decideEffect(
      existing?.state,
      recordedKind(existing) ?? kind,
      tool?.reconcile !== undefined,
      existing?.heldElsewhere,
    );
    if (existing) this.record.linkToClaim(existing);

    switch (action) {
      case 'resend': {
        await this.record.finish(command, traceHeaders, 'dedup', storedOutcome(existing));
        return 'dedup';
      }
      case 'wait':
        return this.inProgress(existing, deliveryCount);
      case 'escalate': {
        await this.record.escalate(command, traceHeaders, existing);
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
          // A tool that opens waitpoints reconciles to the waitpoint its job opened: the run waits for it.
          const waitpoint = tool.opensWaitpoint ? Waitpoint.safeParse(answer.result) : undefined;
          if (waitpoint && !waitpoint.success)
            throw new InvariantError(`${tool.name} reconciled without its waitpoint`, 'effect.bad_reconcile');
          const outcome: Outcome = waitpoint
            ? { status: 'waiting', waitpoint: waitpoint.data }
            : { status: 'completed', result: answer.result };
          await this.record.finish(
            command,
            traceHeaders,
            'succeeded',
            outcome,
            undefined,
            undefined,
            claimOf(existing),
          );
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
    throw new TransientError(
      `effect ${existing?.key ?? '?'} is held by ${existing?.leasedBy ?? 'another executor'}; looking again when its lease runs out`,
      'tool.in_progress',
      { retryAfterMs: leaseLeftMs(existing, this.time.clock) + 500 },
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
    const row = this.record.resultRow(command, traceHeaders, outcome, false);
    const ledger = new EffectLedgerRepository(this.db.sql);
    if (await ledger.recordCancelled(effect, outcome, row)) {
      await this.relay.publishCommitted([row]);
      return 'cancelled';
    }
    const existing = await ledger.get(effect.key, this.holder?.holder);
    this.record.checkTenant(command, existing);
    if (!existing || existing.state === 'started') return 'in-progress';
    if (existing.state === 'uncertain') {
      await this.record.escalate(command, traceHeaders, existing);
      return 'escalated';
    }
    await this.record.finish(command, traceHeaders, 'dedup', storedOutcome(existing));
    return 'dedup';
  }
  /**
   * Runs the tool and records its outcome. `unrecorded`: the call's row is not written yet (a pure call,
   * or an idempotent call's first delivery): its outcome statement inserts it. Otherwise `claim` is the
   * `started` row this attempt holds, and the outcome ends it (compare and set).
   */
  private async execute(
    command: ToolCallCommand,
    traceHeaders: Record<string, string>,
    unrecorded: StartEffect | undefined,
    result: ToolCallResult,
    tool: AnyTool | undefined,
    claim?: LedgerSnapshot,
  ): Promise<ToolCallResult> {
    // A claimed call: `started` is committed, nothing has acted yet.
    if (unrecorded === undefined) await crashPoint('tools.after-started');
    // An idempotent call acting before its claim: the claim is written if it acts long (DeferredClaim).
    const deferred =
      unrecorded && unrecorded.kind === 'idempotent' && this.control?.claimAfterMs !== undefined
        ? new DeferredClaim(this.db, unrecorded, this.control.leases, this.services.logger, this.control.claimAfterMs)
        : undefined;
    let outcome: ToolRunOutcome;
    try {
      outcome = tool
        ? await this.acting.run(
            command,
            callKind(tool, command.args, command.toolConfig),
            unrecorded === undefined,
            (stop) => runTool(tool, command, this.services, stop),
          )
        : {
            status: 'failed',
            error: { code: 'unknown_tool', message: `no tool named ${command.tool} is registered`, retryable: false },
          };
    } catch (error) {
      await deferred?.settle();
      throw error;
    }
    // Settled before the crash point below, so no claim is written after the effect ended. A claim
    // written while the call acted is ended by the outcome like any claim.
    const held = (await deferred?.settle()) ?? claim;
    const pure = held ? undefined : unrecorded;
    await crashPoint('tools.after-effect');
    let recorded: 'recorded' | EffectRecord;
    if (outcome.status === 'uncertain') {
      this.services.logger.warn('effect uncertain: escalated', { key: command.idempotencyKey, tool: command.tool });
      const notice = uncertain(command, outcome.reason);
      recorded = await this.record.finish(command, traceHeaders, 'uncertain', notice, pure, tool, held);
    } else {
      // A call that opened a waitpoint did what it was asked: its answer (the waitpoint) is its result.
      const state = outcome.status === 'completed' || outcome.status === 'waiting' ? 'succeeded' : 'failed';
      recorded = await this.record.finish(command, traceHeaders, state, outcome, pure, tool, held);
    }
    if (recorded === 'recorded') return result;
    // The row moved on while this attempt acted (a human answered it, or a newer attempt holds it), or
    // another delivery of this pure call recorded its outcome first: what the row holds stands.
    this.record.checkTenant(command, recorded);
    if (!pure && recorded.state === 'started') {
      // A newer attempt took the key over (this one's lease ran out while it acted: Postgres was away, the
      // bus gave the message to another executor). That attempt may be acting on a delivery of this very
      // message: ending the message here would also end it for that attempt, so were it to fail
      // transiently, its message would never come back and the thread would never get the result (the
      // stall of seed 474285). The message comes back instead, after the newer attempt's lease, and is
      // decided again: finished (re-sent), still held (left to it) or abandoned (retried).
      throw new TransientError(
        `effect ${command.idempotencyKey}: attempt ${recorded.attempts} took it over while attempt ` +
          `${held?.attempts ?? '?'} acted; this attempt's outcome is dropped, the call is decided again`,
        'effect.superseded',
        { retryAfterMs: leaseLeftMs(recorded, this.time.clock) + 500 },
      );
    }
    this.record.linkToClaim(recorded);
    const action = decideEffect(recorded.state, 'pure', false);
    switch (action) {
      case 'resend':
        await this.record.finish(command, traceHeaders, 'dedup', storedOutcome(recorded));
        return 'dedup';
      case 'escalate':
        await this.record.escalate(command, traceHeaders, recorded);
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
}

/** How long the lease on a `started` effect still runs (0: none, or it ran out). */
function leaseLeftMs(existing: EffectRecord | undefined, clock: Clock): number {
  return existing?.leaseUntil ? Math.max(0, Date.parse(existing.leaseUntil) - clock.now().getTime()) : 0;
}
