import type { ChatMessage, Subjects, ThreadInboxMessage, TraceContext } from '@ratchet/contracts';
import type {
  CommittedPublisher,
  IdSource,
  Outgoing,
  OutboxMessage,
  PendingMarks,
  ThreadCommand,
  ThreadState,
  ThreadStore,
} from '@ratchet/domain';

/**
 * What the engine is given by the service it runs in: the store and the relay below it, and the parts
 * that are the service's own (what a decision's requests become on the bus, what an inbox message
 * becomes as a command, the facts an edge adds, the tools it runs in-process). One object, built once
 * at the composition root; everything optional has the default named beside it.
 */
export interface ThreadEngineDeps {
  store: ThreadStore<ThreadState>;
  /** Publishes committed outbox rows right after the commit (the sweeper does it if this process dies first). */
  relay: CommittedPublisher;
  /**
   * The relay's published rows waiting to be marked sent: a decision that commits takes them along in its
   * statement, instead of a statement and commit of their own (none by default: the relay marks them).
   */
  marks?: PendingMarks | undefined;
  /** Where committed events are published (the thread's event feed). */
  subjects: Subjects;
  /** What a decision's requests (model calls, tool calls, replies…) become as outbox messages. */
  outgoing: OutgoingMapper;
  /** A thread-inbox message (a result, a cancel, a decision) as the command the decider takes. */
  toCommand: InboxToCommand;
  /** Facts only the edge can supply once the thread is loaded (none by default). */
  enrich?: CommandEnricher | undefined;
  /** How long an outbox row is leased to this process, for messages it executes itself (none by default). */
  leaseOf?: ((message: OutboxMessage) => MessageLease | undefined) | undefined;
  /** Runs `local` tools inside the decision that calls them (none by default: every call goes to the executor). */
  localTools?: LocalToolRunner | undefined;
  /** Where event ids come from (random by default). */
  ids?: IdSource | undefined;
  group?: GroupCommitOptions | undefined;
}

/** How a message this process executes itself is held: its lease, and what its row holds instead of the payload. */
export interface MessageLease {
  leaseMs: number;
  holder: string;
  storedPayload?: unknown;
}

export interface GroupCommitOptions {
  /** Messages of different threads decided in one transaction at most. Default 32; 1 turns grouping off. */
  maxBatch?: number;
  /** Group transactions running at once. Default 4. */
  concurrency?: number;
  /** Threads whose last committed state this process keeps, to decide their next message without reading them. Default 1024; 0 turns it off. */
  cachedThreads?: number;
}

/** Completes a command with facts only the edge can supply once the thread is loaded (policy, clock, digests). */
export type CommandEnricher = (state: ThreadState, command: ThreadCommand) => Promise<ThreadCommand>;

export type InboxToCommand = (message: ThreadInboxMessage, at: string) => ThreadCommand;

/** Where a decision's messages come from: its thread, the version after its events, the message it decided. */
export interface OutgoingContext {
  tenantId: string;
  threadId: string;
  /** The thread version after the decision's events. */
  version: number;
  /** The id of the message the decision was made for (a reply's row is unique per request message). */
  causationId: string;
  /** The decision's time. */
  at: string;
}

/** One decision's requests, with what they are built from. */
export interface OutgoingRequest {
  context: OutgoingContext;
  /** The thread's state after the decision's events. */
  state: ThreadState;
  outgoing: readonly Outgoing[];
  trace: TraceContext | undefined;
  /** The thread's whole conversation, loaded only when a request is a model call. */
  transcript: readonly ChatMessage[] | undefined;
}

export type OutgoingMapper = (request: OutgoingRequest) => Promise<OutboxMessage[]>;

/**
 * Runs `local` tools (pure, cheap, no I/O) inside the decision that calls them (ADR 0010). `toolOf` says
 * whether an outbox message is such a call; `run` returns its result message, or `undefined` when the
 * call must go to the executor after all.
 */
export interface LocalToolRunner<Tool = unknown> {
  toolOf(message: OutboxMessage): Tool | undefined;
  run(tool: Tool, message: OutboxMessage): Promise<ThreadInboxMessage | undefined>;
}
