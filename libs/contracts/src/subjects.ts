import { SubjectToken } from './ids';

/**
 * Every NATS subject Ratchet uses, from one prefix (configuration; default `ratchet`), so tests and
 * environments can share one server without overlapping streams.
 */
export function subjects(prefix: string) {
  const token = (kind: string, value: string): string => {
    const ok = SubjectToken.safeParse(value);
    if (!ok.success) throw new Error(`invalid ${kind} for a subject: ${JSON.stringify(value)}`);
    return value;
  };
  return {
    prefix,
    requests: (tenant: string) => `${prefix}.requests.${token('tenant', tenant)}`,
    requestsAll: `${prefix}.requests.>`,
    inbox: (tenant: string, thread: string) => `${prefix}.inbox.${token('tenant', tenant)}.${token('thread', thread)}`,
    inboxAll: `${prefix}.inbox.>`,
    modelCommands: (tenant: string) => `${prefix}.cmd.model.${token('tenant', tenant)}`,
    modelCommandsAll: `${prefix}.cmd.model.>`,
    toolCommands: (tenant: string) => `${prefix}.cmd.tool.${token('tenant', tenant)}`,
    toolCommandsAll: `${prefix}.cmd.tool.>`,
    approvalCommands: (tenant: string) => `${prefix}.cmd.approval.${token('tenant', tenant)}`,
    approvalCommandsAll: `${prefix}.cmd.approval.>`,
    /** Run-control notices for the tool executor (a run stopped): durable, on the COMMANDS stream. */
    controlCommands: (tenant: string) => `${prefix}.cmd.control.${token('tenant', tenant)}`,
    controlCommandsAll: `${prefix}.cmd.control.>`,
    /** Webhook deliveries of ended runs, for the orchestrators' webhook sender: durable, on COMMANDS. */
    webhookCommands: (tenant: string) => `${prefix}.cmd.webhook.${token('tenant', tenant)}`,
    webhookCommandsAll: `${prefix}.cmd.webhook.>`,
    /** Revocations of a tenant's principals, for the orchestrators (PrincipalRevokedMessage): durable, on COMMANDS. */
    revocationCommands: (tenant: string) => `${prefix}.cmd.revocation.${token('tenant', tenant)}`,
    revocationCommandsAll: `${prefix}.cmd.revocation.>`,
    /** A tenant's webhook deliveries and signing secret (request/reply, the orchestrator's). */
    webhooks: (tenant: string, op: string) => `${prefix}.webhooks.${token('tenant', tenant)}.${op}`,
    webhooksAll: `${prefix}.webhooks.*.*`,
    /**
     * Completing a tenant's waitpoints from another service (request/reply, the approvals service's):
     * `<prefix>.waitpoints.<tenant>.complete`. The tenant is the subject's: NATS permissions decide who may
     * publish for which tenant, as for `requests.<tenant>`.
     */
    waitpoints: (tenant: string, op: 'complete') => `${prefix}.waitpoints.${token('tenant', tenant)}.${op}`,
    waitpointsAll: `${prefix}.waitpoints.*.*`,
    /** The same notice broadcast on core NATS to every process, so work in flight stops at once. */
    runStops: (tenant: string, thread: string) =>
      `${prefix}.stop.${token('tenant', tenant)}.${token('thread', thread)}`,
    runStopsAll: `${prefix}.stop.>`,
    /** A model's answer as it is written (core NATS, not durable). */
    tokens: (tenant: string, thread: string) =>
      `${prefix}.tokens.${token('tenant', tenant)}.${token('thread', thread)}`,
    tokensOfTenant: (tenant: string) => `${prefix}.tokens.${token('tenant', tenant)}.>`,
    commandsAll: `${prefix}.cmd.>`,
    /**
     * The per-event feed (v1), no longer published (ADR 0042): the EVENTS stream still captures it and
     * erasure and retention still purge it, for what an earlier release published there.
     */
    events: (tenant: string, thread: string) =>
      `${prefix}.events.${token('tenant', tenant)}.${token('thread', thread)}`,
    eventsOfTenant: (tenant: string) => `${prefix}.events.${token('tenant', tenant)}.>`,
    eventsAll: `${prefix}.events.>`,
    /**
     * The thread's feed (feed v2, docs/publishing-runs.md): one message per committed decision, carrying
     * its events in order (`FeedDecision`). On the EVENTS stream.
     */
    feed: (tenant: string, thread: string) => `${prefix}.feed.${token('tenant', tenant)}.${token('thread', thread)}`,
    feedOfTenant: (tenant: string) => `${prefix}.feed.${token('tenant', tenant)}.>`,
    feedAll: `${prefix}.feed.>`,
    /** A deployment-level remote tool, offered to every tenant. */
    toolService: (tool: string) => `${prefix}.toolsvc.${tool}`,
    /** A remote tool that only `tenant`'s runs see and call (NATS permissions bind who may serve it). */
    tenantToolService: (tenant: string, tool: string) => `${prefix}.tenants.${token('tenant', tenant)}.toolsvc.${tool}`,
    /** A tenant's agent catalog (the tenant is the subject's). */
    agents: (tenant: string, op: string) => `${prefix}.agents.${token('tenant', tenant)}.${op}`,
    agentsAll: `${prefix}.agents.*.*`,
    /** The deployment's shared agents (operator credential only). */
    deploymentAgents: (op: string) => `${prefix}.deployment.agents.${op}`,
    deploymentAgentsAll: `${prefix}.deployment.agents.*`,
    /** A tenant's schedules (the tenant is the subject's), served by the orchestrator. */
    schedules: (tenant: string, op: string) => `${prefix}.schedules.${token('tenant', tenant)}.${op}`,
    schedulesAll: `${prefix}.schedules.*.*`,
    /** The tool catalog a tenant's runs see (served by the tool executor). */
    tools: (tenant: string, op: string) => `${prefix}.tools.${token('tenant', tenant)}.${op}`,
    toolsAll: `${prefix}.tools.*.*`,
    /** The tools every tenant is offered (what shared agents may list). */
    deploymentTools: (op: string) => `${prefix}.deployment.tools.${op}`,
  };
}
export type Subjects = ReturnType<typeof subjects>;

/** The tenant and op of `<prefix>.<root>.<tenant>.<op>` (agents, tools), or undefined. */
export function tenantOpOfSubject(
  prefix: string,
  root: string,
  subject: string,
): { tenant: string; op: string } | undefined {
  const head = `${prefix}.${root}.`;
  if (!subject.startsWith(head)) return undefined;
  const [tenant, op, ...rest] = subject.slice(head.length).split('.');
  if (rest.length > 0 || !tenant || !op || !SubjectToken.safeParse(tenant).success) return undefined;
  return { tenant, op };
}

/**
 * The tool a remote tool service's subject serves, and the tenant it is bound to (undefined: every
 * tenant): `<prefix>.toolsvc.<tool>` or `<prefix>.tenants.<tenant>.toolsvc.<tool>`. Undefined when the
 * subject is neither or the tool name is not a valid one.
 */
export function parseToolServiceSubject(
  prefix: string,
  subject: string,
): { tool: string; tenant?: string } | undefined {
  const shared = `${prefix}.toolsvc.`;
  const tenants = `${prefix}.tenants.`;
  const valid = (tool: string) => /^[a-z][a-z0-9_.-]*$/.test(tool) && tool.length <= 128 && !tool.endsWith('.');
  if (subject.startsWith(shared)) {
    const tool = subject.slice(shared.length);
    return valid(tool) ? { tool } : undefined;
  }
  if (!subject.startsWith(tenants)) return undefined;
  const [tenant, root, ...rest] = subject.slice(tenants.length).split('.');
  const tool = rest.join('.');
  if (!tenant || root !== 'toolsvc' || !SubjectToken.safeParse(tenant).success || !valid(tool)) return undefined;
  return { tool, tenant };
}

/** The tenant a request subject binds, or undefined if the subject is not a request subject. */
export function tenantOfRequestSubject(prefix: string, subject: string): string | undefined {
  const head = `${prefix}.requests.`;
  if (!subject.startsWith(head)) return undefined;
  const tenant = subject.slice(head.length);
  return SubjectToken.safeParse(tenant).success ? tenant : undefined;
}

export const HEADERS = {
  msgId: 'Nats-Msg-Id',
  traceparent: 'traceparent',
  tracestate: 'tracestate',
  idempotencyKey: 'Ratchet-Idempotency-Key',
  messageType: 'Ratchet-Message-Type',
  tenant: 'Ratchet-Tenant',
  /** On a command the sweeper publishes after the process it was leased to never finished it: a retry. */
  leaseExpired: 'Ratchet-Lease-Expired',
} as const;
