import { z } from 'zod';
import { AgentDefinition } from './agent';
import { Principal } from './ids';

/**
 * Request/reply with the orchestrator, which owns agent definitions (the gateway's `/v1/agents` relays
 * to it):
 * - `<prefix>.agents.<tenant>.<op>`: a tenant's catalog. The tenant is the subject's (bound by NATS
 *   permissions), never the body's. `list`/`get` see the tenant's own agents and the deployment's shared
 *   ones; `register` (role `admin`) writes the tenant's own.
 * - `<prefix>.deployment.agents.<op>`: the deployment's shared agents, offered to every tenant; `register`
 *   needs the `operator` role, which only a deployment operator credential carries.
 */
export const AgentsRequest = z.discriminatedUnion('op', [
  z.object({ op: z.literal('list'), principal: Principal }).strict(),
  z
    .object({
      op: z.literal('get'),
      principal: Principal,
      name: z.string(),
      version: z.number().int().positive().optional(),
    })
    .strict(),
  z.object({ op: z.literal('register'), principal: Principal, definition: z.unknown() }).strict(),
]);
export type AgentsRequest = z.infer<typeof AgentsRequest>;
export type AgentsOp = AgentsRequest['op'];
export const AGENTS_OPS = ['list', 'get', 'register'] as const satisfies readonly AgentsOp[];

/** The role a principal needs to change the deployment's shared agents (never a tenant role). */
export const OPERATOR_ROLE = 'operator';

export const StoredAgentView = z.object({
  name: z.string(),
  version: z.number().int(),
  digest: z.string(),
  scope: z
    .enum(['tenant', 'shared'])
    .describe("tenant: the caller's tenant owns it; shared: the deployment offers it to every tenant"),
  definition: AgentDefinition,
});

/**
 * How an owner of definitions (agents, schedules) refuses a request over request/reply: a code the
 * gateway maps to its HTTP status, and the problems of a definition that does not validate.
 */
export const DefinitionRefusal = z.object({
  ok: z.literal(false),
  error: z.object({
    code: z.enum(['invalid', 'not_found', 'forbidden', 'conflict', 'unavailable']),
    message: z.string(),
    problems: z.array(z.string()).optional(),
  }),
});

export const AgentsReply = z.union([
  z.object({ ok: z.literal(true), agents: z.array(StoredAgentView) }),
  z.object({ ok: z.literal(true), agent: StoredAgentView, created: z.boolean().optional() }),
  DefinitionRefusal,
]);
export type AgentsReply = z.infer<typeof AgentsReply>;
