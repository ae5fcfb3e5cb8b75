import { createHash } from 'node:crypto';
import type { AgentDefinition, Json, ToolCall } from '@ratchet/contracts';
import type { ApprovalNeed } from '@ratchet/domain';

/** A stable digest of a call's arguments: an approval covers exactly these arguments, nothing else. */
export function argsDigest(args: Json): string {
  return `sha256:${createHash('sha256').update(canonical(args)).digest('hex')}`;
}

function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k] ?? null)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Which calls of a model response need a human decision under the agent's policy, and what each
 * approval is: its id derives from the run, step and call, so deciding again (after a conflict or a
 * crash) asks for the same approval instead of a second one.
 */
export function approvalNeeds(
  agent: AgentDefinition,
  runId: string,
  step: number,
  calls: readonly ToolCall[],
  at: string,
): Record<string, ApprovalNeed> {
  const needs: Record<string, ApprovalNeed> = {};
  for (const call of calls) {
    const policy = agent.tools.find((t) => t.name === call.name)?.approval;
    if (!policy || policy.when !== 'always') continue;
    needs[call.id] = {
      approvalId: `apr_${createHash('sha256').update(`${runId}\u0000${step}\u0000${call.id}`).digest('base64url').slice(0, 22)}`,
      role: policy.role,
      expiresAt: new Date(Date.parse(at) + policy.expiresInSeconds * 1000).toISOString(),
      argsDigest: argsDigest(call.args),
      fourEyes: policy.fourEyes,
    };
  }
  return needs;
}
