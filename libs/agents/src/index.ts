// A deployment's agents as the orchestrator runs them: the catalog of agent definitions per tenant (with
// the tools an agent may list and the per-tool settings of a pinned version) and the approval rules that
// apply to their calls (policy, the re-check of a grant, tool permissions). Framework-free; the
// orchestrator builds them and wires them into the engine. See docs/adr/0038-agents-and-requests-as-libraries.md.
export { AgentCatalog } from './catalog/agent-catalog';
export { CatalogTools, type ToolSpecs } from './catalog/catalog-tools';
export { toolConfigsOf, type AgentToolConfigLookup } from './catalog/tool-configs';
export { UnknownToolsError, type ToolDirectory } from './catalog/tool-directory';
export { approvalEnricher } from './approvals/approval-enricher';
export { approvalEnrichers, composeEnrichers, natsRecheckPorts } from './approvals/approval-enrichers';
export { approvalIdFor, approvalNeeds, argsDigest, conditionHolds } from './approvals/approval-policy';
export {
  RECHECK_ACTOR,
  RUNNER_ROLE,
  approvalRecheckEnricher,
  type PrincipalQuery,
  type PrincipalStanding,
  type RecheckPorts,
} from './approvals/approval-recheck';
export { TOOL_FORBIDDEN, toolForbidden, toolPermission, type ToolPermission } from './approvals/tool-permission';
