// `@ratchet/adapters/operator`: the queries an operator runs across tenants and services (the `ratchet`
// CLI): thread listings, erasure by subject, inbox/outbox health, dead letters. No service imports
// them; they read and write other services' tables and so stay out of the services' entry. What the
// orchestrator's own housekeeping and thread erasure use (retention, one thread's removal) is in the
// main entry, and the CLI takes it from there.
export { listFailures, type FailedMessageRow } from './postgres/failed-messages.repository';
export {
  listThreadKeys,
  listThreads,
  tenantsOfThread,
  type ThreadKeyFilter,
  type ThreadListFilter,
  type ThreadListRow,
} from './postgres/operator-threads.queries';
export {
  databaseNow,
  inboxHealth,
  outboxHealth,
  type InboxHealth,
  type OutboxHealth,
} from './postgres/service-health.queries';
export { listThreadKeysWithSnapshots } from './postgres/retention.queries';
export {
  countMemoryOfSubject,
  erasureTombstoneHash,
  removeSubjectIdempotencyKeys,
  threadsOfPrincipal,
  type ErasureTombstone,
} from './postgres/erasure.queries';
