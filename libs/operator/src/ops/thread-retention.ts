// Compaction and removal of threads live in @ratchet/platform (shared with the orchestrator's built-in
// housekeeping).
export {
  addCounts,
  compactThread,
  eventsStream,
  inTransaction,
  nonZero,
  purgeThreadSubject,
  removeThreadRows,
  total,
  type CompactOutcome,
} from '@ratchet/platform';
