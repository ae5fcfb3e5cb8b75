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
    /** The same notice broadcast on core NATS to every process, so work in flight stops at once. */
    runStops: (tenant: string, thread: string) =>
      `${prefix}.stop.${token('tenant', tenant)}.${token('thread', thread)}`,
    runStopsAll: `${prefix}.stop.>`,
    /** A model's answer as it is written (core NATS, not durable). */
    tokens: (tenant: string, thread: string) =>
      `${prefix}.tokens.${token('tenant', tenant)}.${token('thread', thread)}`,
    tokensOfTenant: (tenant: string) => `${prefix}.tokens.${token('tenant', tenant)}.>`,
    commandsAll: `${prefix}.cmd.>`,
    events: (tenant: string, thread: string) =>
      `${prefix}.events.${token('tenant', tenant)}.${token('thread', thread)}`,
    eventsOfTenant: (tenant: string) => `${prefix}.events.${token('tenant', tenant)}.>`,
    eventsAll: `${prefix}.events.>`,
    toolService: (tool: string) => `${prefix}.toolsvc.${tool}`,
    agents: (op: string) => `${prefix}.agents.${op}`,
    agentsAll: `${prefix}.agents.*`,
  };
}
export type Subjects = ReturnType<typeof subjects>;

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
