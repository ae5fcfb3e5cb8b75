// The fold, verification and rebuild of a thread's log live in @ratchet/platform (the orchestrator's
// built-in housekeeping compacts with them too).
export {
  canonicalJsonStrings,
  foldLog,
  logVersionOf,
  readSnapshotIn,
  readThreadLog,
  rebuildThread,
  runRowsOfLog,
  threadStore,
  verifyThread,
  type ThreadLog,
  type Verification,
} from '@ratchet/platform';
