import { createHash } from 'node:crypto';
import type { AgentDefinition, ApprovalCondition, ApprovalConditionTest, Json, ToolCall } from '@ratchet/contracts';
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

/** The approval id of a call: derived from the run, step and call, so deciding again asks for the same one. */
export function approvalIdFor(runId: string, step: number, callId: string): string {
  return `apr_${createHash('sha256').update(`${runId}\u0000${step}\u0000${callId}`).digest('base64url').slice(0, 22)}`;
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
    if (!policy || policy.when === 'never') continue;
    if (policy.when === 'if' && !conditionHolds(policy.condition, call.args)) continue;
    needs[call.id] = {
      approvalId: approvalIdFor(runId, step, call.id),
      role: policy.role,
      expiresAt: new Date(Date.parse(at) + policy.expiresInSeconds * 1000).toISOString(),
      argsDigest: argsDigest(call.args),
      fourEyes: policy.fourEyes,
    };
  }
  return needs;
}

/**
 * Whether a policy condition holds for these arguments (a list: any one test). No expression is ever
 * evaluated; a missing condition holds (fail closed: ask a human).
 */
export function conditionHolds(condition: ApprovalCondition | undefined, args: Record<string, Json>): boolean {
  if (condition === undefined) return true;
  const tests = Array.isArray(condition) ? condition : [condition];
  return tests.some((t) => testHolds(t, args));
}

const MISSING = Symbol('missing');

function lookup(args: Record<string, Json>, path: string): Json | typeof MISSING {
  let value: Json = args;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return MISSING;
    if (!Object.prototype.hasOwnProperty.call(value, key)) return MISSING;
    value = value[key] ?? null;
  }
  return value;
}

/** A number, or a string that is exactly a decimal number ("150", "-2.5"); anything else is not comparable. */
function asNumber(value: Json | typeof MISSING): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

function testHolds(test: ApprovalConditionTest, args: Record<string, Json>): boolean {
  const actual = lookup(args, test.arg);
  switch (test.op) {
    case 'exists':
      return actual !== MISSING && actual !== null;
    case 'eq':
      return actual !== MISSING && canonical(actual) === canonical(test.value ?? null);
    case 'ne':
      return actual === MISSING || canonical(actual) !== canonical(test.value ?? null);
    case 'in': {
      if (actual === MISSING) return false;
      const options = Array.isArray(test.value) ? test.value : [];
      return options.some((v) => canonical(v) === canonical(actual));
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const limit = typeof test.value === 'number' ? test.value : Number.NaN;
      const n = asNumber(actual);
      // Not comparable (missing, text, an object): the call asks a human rather than slip past the rule.
      if (n === undefined || Number.isNaN(limit)) return true;
      if (test.op === 'gt') return n > limit;
      if (test.op === 'gte') return n >= limit;
      if (test.op === 'lt') return n < limit;
      return n <= limit;
    }
  }
}
