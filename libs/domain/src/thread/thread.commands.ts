import type { RunAsked, RunEnding } from './thread.state';
import type {
  RunSlot,
  RunThrottle,
  RunDebounce,
  Failure,
  Json,
  LimitBound,
  NewEvent,
  Principal,
  RecalledMemoryItem,
  RunOutcome,
  ToolCall,
  Usage,
  Waitpoint,
} from '@ratchet/contracts';

/** Everything a decision needs from outside arrives on the command: ids, time, the agent's limits. */
interface CommandBase {
  tenantId: string;
  threadId: string;
  /** The time of the decision (the handler's clock, passed in). */
  at: string;
  /**
   * Set when the message behind this command was delivered before and never acked: the worker that
   * had it died (or stalled). A decision that moves the active run then records `run.resumed`.
   */
  resume?: { fromVersion: number; delivery: number; worker: string } | undefined;
}

/** A run request; its `requestDigest` (of the contracts) is what a resend must match. */
export interface RequestRun extends CommandBase, RunAsked {
  type: 'RequestRun';
  metadata: Record<string, string>;
  /**
   * A fact the edge supplies (from the `runs` projection, which keeps every run the tenant ever
   * accepted): a run already has this request id. The state holds only the runs still going, so a
   * request retried after its run ended — or sent again naming another thread — is recognised by this
   * fact alone.
   */
  known?: KnownRequest | undefined;
  /**
   * The deployment's bound on the tenant's runs in flight (queued or running), when it has one: a new run
   * past it is refused (`tenant.runs_limit`, retryable) instead of accepted.
   */
  activeRunLimit?: number | undefined;
  /** A fact the edge supplies with `activeRunLimit`: the tenant's runs in flight now (counted up to the bound). */
  activeRuns?: number | undefined;
  /**
   * What a request past `activeRunLimit` gets (`TENANT_RUNS_OVER_BOUND`): refused (the default), or queued
   * for admission (`run.queued` with `waitingFor`), started by an `AdmitRun` when the tenant has room.
   */
  overBound?: 'refuse' | 'queue' | undefined;
  /**
   * The run's concurrency keys with their max (its agent's `slots` over the request's metadata, ADR 0045):
   * a run that would pass one is queued for admission (`waitingFor.bound: slot`).
   */
  slots?: RunSlot[] | undefined;
  /** A fact the edge supplies with `slots`: the tenant's runs in flight holding each key, counted up to its max. */
  slotRuns?: Record<string, number> | undefined;
  /**
   * The throttle the run starts under (its agent's `throttle` over the request's metadata): a run that would
   * pass it, or that cannot start at once (its thread is busy), is held for admission (`waitingFor.bound:
   * throttle`): a throttled run starts only in a decision that counted its key's starts.
   */
  throttle?: RunThrottle | undefined;
  /** A fact the edge supplies with `throttle`: the runs with its key that started after `at` − its period, up to its limit. */
  throttleStarts?: number | undefined;
  /**
   * The debounce the run is requested under (its agent's `debounce` over the request's metadata): it is held
   * for admission (`waitingFor.bound: debounce`) and starts a period after its request, unless a later
   * request of its key supersedes it.
   */
  debounce?: RunDebounce | undefined;
  /**
   * The deployment's bound on the tenant's waiting runs (running, but waiting for a human: they left the
   * runs in flight), when it has one: a new run while the tenant has that many is refused
   * (`tenant.waiting_runs_limit`, retryable).
   */
  waitingRunLimit?: number | undefined;
  /** A fact the edge supplies with `waitingRunLimit`: the tenant's waiting runs now (counted up to the bound). */
  waitingRuns?: number | undefined;
}

/** The run a request id already started, as the `runs` projection has it. */
export interface KnownRequest {
  runId: string;
  threadId: string;
  /** Null for runs requested before digests were recorded: those match any resend. */
  requestDigest: string | null;
  /** How it ended; null while it is queued or running. */
  outcome: RunEnding | null;
}

export type ModelOutcome =
  | { status: 'ok'; content: string | null; toolCalls: ToolCall[]; usage: Usage; model: string }
  | { status: 'error'; error: Failure };

/** What the agent's approval policy asks for one call, evaluated at the edge (it needs a clock and a digest). */
export interface ApprovalNeed {
  approvalId: string;
  role: string;
  expiresAt: string;
  argsDigest: string;
  fourEyes: boolean;
}

export interface RecordModelResult extends CommandBase {
  type: 'RecordModelResult';
  runId: string;
  commandId: string;
  step: number;
  outcome: ModelOutcome;
  /** Memory items the model worker recalled into the prompt (identity and version only), when it made a recall. */
  recalled?: RecalledMemoryItem[];
  /** The provider limit the call was made under (its key has one), for a 429's wait and failure to name. */
  limit?: string;
  /** How many of the conversation's messages the model was sent, when the agent bounds its context. */
  context?: { sent: number; of: number };
  /** The command's JetStream delivery and the worker that answered it (a redelivery is a new attempt). */
  delivery?: number;
  worker?: string;
  /** Calls (by id) that need a human decision before they may run. */
  approvals?: Record<string, ApprovalNeed>;
  /** Calls (by id) that may not run at all (e.g. the principal lacks a role the tool needs): closed as failed. */
  refusals?: Record<string, Failure>;
}

/**
 * A model call was not made: a provider limit has no room for it before `until` (docs/flow-control.md).
 * The thread commands the same attempt again for then.
 */
export interface RecordModelWait extends CommandBase {
  type: 'RecordModelWait';
  runId: string;
  commandId: string;
  step: number;
  limit: string;
  bound: LimitBound;
  until: string;
  /** The command's JetStream delivery and the worker that answered it (a redelivery is a new attempt). */
  delivery?: number;
  worker?: string;
}

/** A model worker picked up a redelivered model command: the earlier attempt died mid-call. */
export interface RecordModelAttempt extends CommandBase {
  type: 'RecordModelAttempt';
  runId: string;
  commandId: string;
  delivery: number;
  worker: string;
}

export interface RecordApprovalDecision extends CommandBase {
  type: 'RecordApprovalDecision';
  runId: string;
  callId: string;
  approvalId: string;
  decision: 'granted' | 'rejected' | 'expired';
  by: string;
  reason: string;
}

export type ToolOutcome =
  | { status: 'completed'; result: Json }
  | { status: 'failed'; error: Failure }
  | { status: 'uncertain'; idempotencyKey: string; reason: string }
  /** The executor never ran it: its run had stopped before the call started (no effect). */
  | { status: 'cancelled'; reason: string }
  /** It ran and started something outside that answers later: the run waits for the waitpoint it opened. */
  | { status: 'waiting'; waitpoint: Waitpoint };

export interface RecordToolResult extends CommandBase {
  type: 'RecordToolResult';
  runId: string;
  callId: string;
  step: number;
  outcome: ToolOutcome;
}

/** A waitpoint was decided: completed (with its result) or failed by the outside world, or expired. */
export interface RecordWaitpointDecision extends CommandBase {
  type: 'RecordWaitpointDecision';
  runId: string;
  callId: string;
  waitpointId: string;
  decision: { status: 'completed'; result: Json } | { status: 'failed'; error: Failure } | { status: 'expired' };
  /** Who completed it (a principal, `callback` for the signed URL); the approvals service for an expiry. */
  by: string;
}

export interface CancelRun extends CommandBase {
  type: 'CancelRun';
  runId: string;
  by: string;
  reason: string;
}

/** The watchdog (or an operator) nudges a run that made no progress and has nothing in flight. */
export interface ResumeRun extends CommandBase {
  type: 'ResumeRun';
  runId: string;
  reason: string;
  worker: string;
  fromVersion: number;
}

/**
 * The admission pass (ADR 0045) asks the thread to start its first run held for admission, with the
 * tenant's runs in flight counted under the tenant's lock: it starts when there is room, else nothing.
 */
export interface AdmitRun extends CommandBase {
  type: 'AdmitRun';
  runId: string;
  /** The tenant's bound, when it has one (TENANT_MAX_ACTIVE_RUNS). */
  activeRunLimit?: number | undefined;
  /** A fact the edge supplies: the tenant's runs in flight now (counted up to `activeRunLimit`). */
  activeRuns?: number | undefined;
  /** The held run's concurrency keys, as its ticket has them. */
  slots?: RunSlot[] | undefined;
  /** A fact the edge supplies with `slots`: runs in flight per key, counted up to its max. */
  slotRuns?: Record<string, number> | undefined;
  /** The held run's throttle, as its ticket has it. */
  throttle?: RunThrottle | undefined;
  /** A fact the edge supplies with `throttle`: starts with its key after `at` − its period, up to its limit. */
  throttleStarts?: number | undefined;
  /** The run's debounce, as its ticket has it. */
  debounce?: RunDebounce | undefined;
  /** A fact the edge supplies with `debounce`: the run of the latest request of its key not started yet. */
  debounceLatest?: string | undefined;
}

/**
 * A run that has not started asks to be ended past its queued TTL (`limits.queueTtlSeconds`, from its
 * request): the admission pass sends it for the queued runs whose time is up. Nothing happens when the run
 * started meanwhile or its time is not up at `at`.
 */
export interface ExpireQueuedRun extends CommandBase {
  type: 'ExpireQueuedRun';
  runId: string;
}

/** The run exceeded its time budget: it fails, and its dangling calls are closed. */
export interface ExpireRun extends CommandBase {
  type: 'ExpireRun';
  runId: string;
  reason: string;
}

export type ThreadCommand =
  | AdmitRun
  | ExpireRun
  | ExpireQueuedRun
  | RequestRun
  | RecordModelResult
  | RecordModelAttempt
  | RecordModelWait
  | RecordToolResult
  | RecordApprovalDecision
  | RecordWaitpointDecision
  | CancelRun
  | ResumeRun;

/** The tool call an outgoing message is about: run, step and call, and what the model asked. */
interface OutgoingCall {
  runId: string;
  step: number;
  callId: string;
  tool: string;
  args: Record<string, Json>;
}

/** What a decision asks the outside world to do; the handler turns these into outbox rows. */
export type Outgoing =
  | {
      kind: 'model.call';
      runId: string;
      step: number;
      attempt: number;
      commandId: string;
      /** A retry: not before this time (backoff). */
      notBefore?: string | undefined;
    }
  | {
      /** The run stopped: work still in flight for it (model calls, tool calls not started) must stop too. */
      kind: 'run.stop';
      runId: string;
      reason: string;
      /** A human was asked something for the run (an approval, an escalation): the approvals service is told too. */
      humans?: true;
    }
  | (OutgoingCall & {
      kind: 'tool.call';
      idempotencyKey: string;
      principal: Principal;
      commandId: string;
    })
  | (OutgoingCall & {
      kind: 'approval.request';
      principal: Principal;
      need: ApprovalNeed;
    })
  | (OutgoingCall & {
      /** A call opened a waitpoint: the approvals service keeps it until it is completed or expires. */
      kind: 'waitpoint.request';
      principal: Principal;
      waitpoint: Waitpoint;
    })
  | (OutgoingCall & {
      /** An effect may or may not have happened: a human must decide (approvals service). */
      kind: 'escalation.request';
      idempotencyKey: string;
      reason: string;
      principal: Principal;
    })
  | { kind: 'reply'; replyTo: string; outcome: RunOutcome }
  /** A run ended and its request named a webhook: the outcome is delivered to it (docs/webhooks.md). */
  | { kind: 'webhook'; url: string; outcome: RunOutcome; metadata: Record<string, string> };

export interface Decision {
  events: NewEvent[];
  outgoing: Outgoing[];
}

export const NO_DECISION: Decision = Object.freeze({ events: [], outgoing: [] }) as Decision;
