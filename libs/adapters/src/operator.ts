// `@ratchet/adapters/operator`: the queries an operator runs across tenants and services (the `ratchet`
// CLI): thread and run listings, retention and erasure, inbox/outbox health, dead letters. No service
// imports them; they read and write other services' tables and so stay out of the services' entry.
export { listFailures, type FailedMessageRow } from './postgres/failed-messages.repository';
export {
  listThreadKeys,
  listThreads,
  readThreadColumns,
  tenantsOfThread,
  type ThreadKey,
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
export {
  listIdleThreads,
  listTenantsWithThreads,
  listThreadKeysWithSnapshots,
  lockThread,
  readSnapshot,
  saveSnapshotAndTrim,
  type ThreadSnapshot,
} from './postgres/retention.queries';
export {
  countMemoryOfSubject,
  erasureTombstoneHash,
  findErasureTombstones,
  removeThreadEverywhere,
  threadsOfPrincipal,
  writeErasureTombstone,
  type ErasureTombstone,
  type RemovalCounts,
} from './postgres/erasure.queries';
