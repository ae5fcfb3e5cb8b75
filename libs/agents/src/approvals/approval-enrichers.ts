import type { NatsConnection } from 'nats';
import {
  ApprovalsReply,
  approvalsSubjects,
  PrincipalCheckReply,
  type ApprovalsRequestInput,
  type PrincipalCheckRequest,
} from '@ratchet/contracts';
import { TransientError, type ThreadCommand } from '@ratchet/domain';
import type { ServiceRuntime } from '@ratchet/platform';
import type { AgentCatalog } from '../catalog/agent-catalog';
import type { CommandEnricher } from '@ratchet/engine';
import { approvalEnricher } from './approval-enricher';
import { approvalRecheckEnricher, type PrincipalStanding, type RecheckPorts } from './approval-recheck';

/** How long the orchestrator waits for the gateway or the approvals service before the message is retried. */
const REQUEST_TIMEOUT_MS = 5_000;

/** Runs the enrichers one after another, each on the previous one's command. */
export function composeEnrichers(...enrichers: CommandEnricher[]): CommandEnricher {
  return async (state, command) => {
    let current: ThreadCommand = command;
    for (const enrich of enrichers) current = await enrich(state, current);
    return current;
  };
}

/**
 * Everything approvals add to a thread command: the policy (which calls wait), the re-check of a grant
 * when it is applied. (Escalations of uncertain effects are outgoings of the decider, sent through the outbox.)
 */
export function approvalEnrichers(catalog: AgentCatalog, runtime: ServiceRuntime): CommandEnricher {
  return composeEnrichers(
    approvalEnricher(catalog),
    approvalRecheckEnricher(natsRecheckPorts(runtime.nc, runtime.subjects.prefix, catalog)),
  );
}

export function natsRecheckPorts(nc: NatsConnection, prefix: string, catalog: AgentCatalog): RecheckPorts {
  const subjects = approvalsSubjects(prefix);
  const ask = async (subject: string, body: unknown, what: string): Promise<unknown> => {
    try {
      const msg = await nc.request(subject, JSON.stringify(body), { timeout: REQUEST_TIMEOUT_MS });
      return JSON.parse(new TextDecoder().decode(msg.data));
    } catch (error) {
      throw new TransientError(`${what}: no answer on ${subject}`, 'approvals.recheck_unavailable', { cause: error });
    }
  };
  return {
    async checkPrincipal({ tenantId, principalId, roles, runStartedAt }): Promise<PrincipalStanding> {
      const request: PrincipalCheckRequest = {
        tenantId,
        principalId,
        roles,
        ...(runStartedAt !== undefined ? { runStartedAt } : {}),
      };
      const reply = PrincipalCheckReply.parse(await ask(subjects.principalsCheck, request, 'principal check'));
      if (!reply.ok)
        throw new TransientError(`principal check: ${reply.error.message}`, 'approvals.recheck_unavailable');
      return { status: reply.status, reason: reply.reason, roles: reply.roles };
    },
    async toolRoles(tenantId, agent, agentVersion, tool) {
      // A pinned version never changes; one the catalog cannot find is refused by the run itself.
      const stored = await catalog.get(tenantId, agent, agentVersion);
      return stored?.definition.tools.find((t) => t.name === tool)?.roles;
    },
    async verify(request) {
      const body: ApprovalsRequestInput = { op: 'verify', ...request };
      const reply = ApprovalsReply.parse(await ask(subjects.api, body, 'approval verify'));
      if (!reply.ok)
        throw new TransientError(`approval verify: ${reply.error.message}`, 'approvals.recheck_unavailable');
      if (!('valid' in reply))
        throw new TransientError('approval verify: unexpected reply', 'approvals.recheck_unavailable');
      return { valid: reply.valid, reason: reply.reason };
    },
  };
}
