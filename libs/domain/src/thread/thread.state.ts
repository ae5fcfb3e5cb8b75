import type {
  ChatMessage,
  ConcurrencyPolicy,
  Failure,
  JsonObject,
  Principal,
  AdmissionBound,
  RunLimits,
  RunSlot,
  RunThrottle,
  RunDebounce,
  TraceContext,
  WaitpointOnExpiry,
} from '@ratchet/contracts';
import type { RunWait } from './run.waits';

export type CallStatus =
  'awaiting_approval' | 'requested' | 'awaiting_waitpoint' | 'uncertain' | 'completed' | 'failed' | 'cancelled';

/** A wait on the outside world a call opened (`waitpoint.created`): its run waits until it is decided. */
export interface CallWaitpoint {
  waitpointId: string;
  expiresAt: string;
  onExpiry: WaitpointOnExpiry;
  resultSchema?: JsonObject | undefined;
}

export interface PendingCall {
  callId: string;
  tool: string;
  args: JsonObject;
  idempotencyKey: string;
  status: CallStatus;
  /** The approval this call waits for (or waited for), as requested. */
  approval?: { approvalId: string; role: string; expiresAt: string; argsDigest: string; fourEyes: boolean } | undefined;
  /** The waitpoint the call opened (it ran, and started something outside that answers later). */
  waitpoint?: CallWaitpoint | undefined;
}

/** What a run request asks: the `RequestRun` command carries it, and a thread keeps it for its run. */
export interface RunAsked {
  runId: string;
  requestId: string;
  agent: string;
  agentVersion: number;
  maxSteps: number;
  input: ChatMessage[];
  principal: Principal;
  concurrency: ConcurrencyPolicy;
  replyTo?: string | undefined;
  /** Where the outcome is POSTed when the run ends. */
  webhookUrl?: string | undefined;
  /** Digest of what the request asked (see `requestDigest`); absent for runs requested before it existed. */
  requestDigest?: string | undefined;
  /** What the run may spend (from its agent when it was requested); absent fields take the defaults. */
  limits?: RunLimits | undefined;
  /** The concurrency keys it holds while in flight, each with its max (its agent's `slots`, ADR 0045). */
  slots?: RunSlot[] | undefined;
  /** The throttle it starts under (its agent's `throttle`); absent: none. */
  throttle?: RunThrottle | undefined;
  /** The debounce it was requested under (its agent's `debounce`); absent: none. */
  debounce?: RunDebounce | undefined;
  /** Seconds: held for admission, it is served as if requested this much earlier; absent: 0. */
  priority?: number | undefined;
}

/**
 * Why a queued run waits for admission rather than for its thread (ADR 0045): the tenant had as many runs
 * in flight as its bound, or one of the run's concurrency keys as many as its max; and `since` when.
 */
export type AdmissionHold = AdmissionBound & { since: string };

/**
 * A run request accepted for the thread but not started yet: behind the thread's active run (`enqueue`
 * policy), or `held` until the tenant has room for it.
 */
export interface RunTicket extends RunAsked {
  held?: AdmissionHold | undefined;
  /** Past this time the run may not start: it fails as `run.queue_expired` (its `limits.queueTtlSeconds`). */
  queuedUntil?: string | undefined;
  /** Of the request (e.g. the schedule and tick that asked for the run); sent with its webhook. */
  metadata?: Record<string, string> | undefined;
  /** The run's trace: every message and event of the run carries it, across workers and resumes. */
  trace?: TraceContext | undefined;
}

export interface ActiveRun extends RunTicket {
  /** Model calls made so far (the current one included). */
  step: number;
  /** When the current step's first model call was requested (for step latency). */
  stepStartedAt?: string | undefined;
  phase: 'model' | 'tools';
  /** The model call in flight while phase = model (`notBefore`: a retry waits until then). */
  modelCall: {
    commandId: string;
    attempt: number;
    delivery?: number | undefined;
    notBefore?: string | undefined;
  } | null;
  /** The calls of the current super-step, in the order the model asked for them. */
  calls: PendingCall[];
  /** When the run started (its `run.started`), for its `runs` row. */
  startedAt: string;
  /** The last step the model answered (0 before its first answer), for its `runs` row. */
  answered: number;
  /** What the run has spent against its budgets: model calls commanded (every attempt), tokens used. */
  spent?: { modelCalls: number; tokens: number } | undefined;
  /** What the run waits for now (an approval, an operator), since when and until when; absent while it works. */
  waiting?: RunWait | undefined;
  /** How long its waits that ended lasted, in ms (absent: none yet); working time leaves them out. */
  waitedMs?: number | undefined;
  /** How long it has waited out the provider's 429s, in ms (absent: none yet), against `rateLimitWaitSeconds`. */
  rateLimitedMs?: number | undefined;
}

/** How a run ended, as its requester is told: kept with its summary, so a resend is answered the same. */
export interface RunEnding {
  status: 'completed' | 'failed' | 'cancelled';
  output?: string | undefined;
  error?: Failure | undefined;
}

/** A run as the thread remembers it (its `runs` row is this, with its thread and version). */
export interface RunSummary {
  runId: string;
  requestId: string;
  agent: string;
  agentVersion: number;
  principalId: string;
  status: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  steps: number;
  startedAt: string | null;
  endedAt: string | null;
  /** What its request asked (null for runs requested before digests were kept). */
  requestDigest: string | null;
  /** How it ended (null while it goes on). */
  outcome: RunEnding | null;
  /** While it runs: what it waits for (an approval, an operator) and until when; absent while it works. */
  waiting?: RunWait | undefined;
  /** The concurrency keys it holds while in flight (`customer=42`); absent: none. */
  slotKeys?: string[] | undefined;
  /** The throttle key it starts under (`support:userId=42`); kept after it ends: its start counts in the window. */
  throttleKey?: string | undefined;
  /** The debounce key it was requested under (`indexer:documentId=42`): the latest queued request of a key wins. */
  debounceKey?: string | undefined;
  /** While it is queued: past this time it may not start (its queued TTL); absent: no limit. */
  queuedUntil?: string | undefined;
  /** Its priority in the admission queue (seconds); absent: 0. */
  priority?: number | undefined;
}

/**
 * A tool call of a run that ended (cancelled, interrupted, out of time) while the call was already sent:
 * whatever really happened to it (it ran, it failed, it never started, its effect is uncertain) is still
 * to be recorded, after the run's end. Kept until then; bounded by the calls of one step.
 */
export interface SettlingCall {
  runId: string;
  step: number;
  callId: string;
  tool: string;
  args: JsonObject;
  idempotencyKey: string;
  status: 'requested' | 'uncertain';
  /** The run's principal: an escalation of the call's effect is asked on its behalf. */
  principal: Principal;
}

/**
 * The fold of a thread's log: everything the decider needs, and nothing that is not in the log. Bounded:
 * its size does not grow with the thread's history (the runs still going, the current step's calls, two
 * small facts about the conversation). What does grow — the conversation itself and a summary of every
 * run ever — is folded by `foldRecord` into its own projections (`thread_messages`, `runs`), which a
 * decision never loads (ADR 0007).
 */
export interface ThreadState {
  tenantId: string | null;
  threadId: string | null;
  createdAt: string | null;
  active: ActiveRun | null;
  queue: RunTicket[];
  /** How many messages the conversation across runs has: the next one is number `messages + 1`. */
  messages: number;
  /** The conversation's last message when it is the assistant's (its content), else null. */
  lastAssistant: { content: string | null } | null;
  /** Calls of ended runs whose real outcome is still to come (absent when there are none). */
  settling?: SettlingCall[] | undefined;
}

export function initialThreadState(): ThreadState {
  return { tenantId: null, threadId: null, createdAt: null, active: null, queue: [], messages: 0, lastAssistant: null };
}

export type ThreadStatus = 'new' | 'idle' | 'running';

export function threadStatus(state: ThreadState): ThreadStatus {
  if (state.threadId === null) return 'new';
  return state.active ? 'running' : 'idle';
}

/** Calls of ended runs whose outcome is still to come. */
export function settlingCalls(state: ThreadState): SettlingCall[] {
  return state.settling ?? [];
}

export function openCalls(run: ActiveRun): PendingCall[] {
  return run.calls.filter(
    (c) =>
      c.status === 'awaiting_approval' ||
      c.status === 'requested' ||
      c.status === 'awaiting_waitpoint' ||
      c.status === 'uncertain',
  );
}
