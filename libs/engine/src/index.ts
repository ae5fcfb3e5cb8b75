// The thread engine: the command pipeline every change to a thread goes through (queue, group commit,
// claim and load, decide, buffer the writes, commit, publish after commit). A service hands it its own
// parts as one `ThreadEngineDeps`; see docs/adr/0028-the-engine-as-a-library.md.
export { ThreadCommandHandler, type HandleOutcome } from './thread-command.handler';
export type { HandleMeta } from './thread-decision';
export { ThreadInbox, INBOX_CONSUMER } from './thread-inbox';
export { KeyedSerializer } from './keyed-serializer';
export { messageHeaders } from './feed-messages';
export type {
  CommandEnricher,
  GroupCommitOptions,
  InboxToCommand,
  LocalToolRunner,
  MessageLease,
  OutgoingContext,
  OutgoingMapper,
  OutgoingRequest,
  ThreadEngineDeps,
} from './engine-deps';
