/** A request that asks a priority above its agent's without the role that may. */
export interface PriorityForbidden {
  code: 'request.priority_forbidden';
  message: string;
}

/** The role that may raise a run's priority above its agent's (a tenant's admin). */
export const PRIORITY_ROLE = 'admin';

/**
 * A run's priority in the admission queue, in seconds (ADR 0045): the request's, else its agent's, else 0.
 * Anyone may lower it (a batch job yielding to interactive runs); raising it above the agent's takes the
 * `admin` role, so a caller cannot put itself ahead of the others by asking.
 */
export function runPriorityOf(
  requested: number | undefined,
  agentPriority: number | undefined,
  roles: readonly string[],
  agent: string,
): { priority: number } | { error: PriorityForbidden } {
  const base = agentPriority ?? 0;
  if (requested === undefined) return { priority: base };
  if (requested > base && !roles.includes(PRIORITY_ROLE))
    return {
      error: {
        code: 'request.priority_forbidden',
        message: `priority ${requested} is above agent "${agent}"'s (${base}): raising a run's priority takes the ${PRIORITY_ROLE} role; lowering it does not`,
      },
    };
  return { priority: requested };
}
