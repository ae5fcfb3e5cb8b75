import { z } from 'zod';
import { AgentDefinition } from './agent';
import { Principal } from './ids';

/**
 * Request/reply on `<prefix>.agents.<op>` (served by the orchestrator, which owns agent definitions;
 * the gateway's `/v1/agents` relays to it). Registering needs the `admin` role.
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

export const StoredAgentView = z.object({
  name: z.string(),
  version: z.number().int(),
  digest: z.string(),
  definition: AgentDefinition,
});

export const AgentsReply = z.union([
  z.object({ ok: z.literal(true), agents: z.array(StoredAgentView) }),
  z.object({ ok: z.literal(true), agent: StoredAgentView, created: z.boolean().optional() }),
  z.object({
    ok: z.literal(false),
    error: z.object({
      code: z.enum(['invalid', 'not_found', 'forbidden', 'unavailable']),
      message: z.string(),
      problems: z.array(z.string()).optional(),
    }),
  }),
]);
export type AgentsReply = z.infer<typeof AgentsReply>;
