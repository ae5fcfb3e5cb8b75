// The RATCHET_RETENTION policy is read by the CLI and by the orchestrator's housekeeping: @ratchet/platform.
export {
  parseRetentionPolicy,
  ruleFor,
  RETENTION_VARIABLE,
  type RetentionPolicy,
  type RetentionRule,
} from '@ratchet/platform';
