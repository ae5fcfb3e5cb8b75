import type { AgentThrottle, RunThrottle } from '@ratchet/contracts';
import { metadataKey } from './metadata-key';

/** A request whose metadata does not give a value to its agent's throttle key. */
export interface ThrottleKeyMissing {
  code: 'request.throttle_key_missing';
  message: string;
}

/**
 * The throttle a run requested with `metadata` starts under (docs/flow-control.md#throttle): its agent's
 * `throttle`, keyed `<agent>` or `<agent>:<field>=<value>`, with the tenant's own limit and period when an
 * operator gave it one (`tenant`); an agent without a throttle has the tenant's when it gives both, keyed
 * `<agent>`, else none. A request whose metadata lacks the
 * key's field is refused, naming it: a run that could not be counted would escape the throttle.
 */
export function runThrottleOf(
  throttle: AgentThrottle | undefined,
  metadata: Readonly<Record<string, string>>,
  agent: string,
  tenant: { limit?: number | undefined; periodSeconds?: number | undefined } = {},
): { throttle?: RunThrottle } | { error: ThrottleKeyMissing } {
  if (!throttle) {
    // A tenant's own throttle on an agent that declares none: the agent's runs of the tenant together.
    if (tenant.limit === undefined || tenant.periodSeconds === undefined) return {};
    return { throttle: { key: agent, limit: tenant.limit, periodSeconds: tenant.periodSeconds } };
  }
  const limit = tenant.limit ?? throttle.limit;
  const periodSeconds = tenant.periodSeconds ?? throttle.periodSeconds;
  if (throttle.key === undefined) return { throttle: { key: agent, limit, periodSeconds } };
  const { field, value } = metadataKey(throttle.key, metadata);
  if (value === undefined)
    return {
      error: {
        code: 'request.throttle_key_missing',
        message: `agent "${agent}" throttles its runs per ${throttle.key} (at most ${limit} starts per ${periodSeconds} s): the request's metadata has no "${field}"`,
      },
    };
  return { throttle: { key: `${agent}:${field}=${value}`, limit, periodSeconds } };
}
