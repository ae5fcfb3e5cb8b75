import type { Failure } from '@ratchet/contracts';

/** The code of a call refused because the run's principal may not use the tool. */
export const TOOL_FORBIDDEN = 'tool.forbidden';

export type ToolPermission = { allowed: true } | { allowed: false; reason: string };

/**
 * May a principal holding `held` use `tool`, whose agent entry allows `roles`? No `roles`: anyone who
 * may run the agent. Otherwise one of them must be held. The reason names the tool and the roles.
 */
export function toolPermission(
  tool: string,
  roles: readonly string[] | undefined,
  held: readonly string[],
): ToolPermission {
  if (!roles || roles.length === 0) return { allowed: true };
  if (roles.some((r) => held.includes(r))) return { allowed: true };
  return {
    allowed: false,
    reason: `using ${tool} needs the role ${roles.length === 1 ? roles[0] : `one of ${roles.join(', ')}`}, which the run's principal does not hold`,
  };
}

/** A call refused at its start: the model receives it as the tool's result. */
export function toolForbidden(reason: string): Failure {
  return { code: TOOL_FORBIDDEN, message: reason, retryable: false };
}
