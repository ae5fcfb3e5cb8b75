import type { AgentDebounce, RunDebounce } from '@ratchet/contracts';
import { metadataKey } from './metadata-key';

/** A request whose metadata does not give a value to its agent's debounce key. */
export interface DebounceKeyMissing {
  code: 'request.debounce_key_missing';
  message: string;
}

/**
 * The debounce a run requested with `metadata` is under (docs/flow-control.md#debounce): its agent's
 * `debounce`, keyed `<agent>` or `<agent>:<field>=<value>`. None for an agent without one. A request whose
 * metadata lacks the key's field is refused, naming it: it could not be told apart from the others.
 */
export function runDebounceOf(
  debounce: AgentDebounce | undefined,
  metadata: Readonly<Record<string, string>>,
  agent: string,
): { debounce?: RunDebounce } | { error: DebounceKeyMissing } {
  if (!debounce) return {};
  const { periodSeconds } = debounce;
  if (debounce.key === undefined) return { debounce: { key: agent, periodSeconds } };
  const { field, value } = metadataKey(debounce.key, metadata);
  if (value === undefined)
    return {
      error: {
        code: 'request.debounce_key_missing',
        message: `agent "${agent}" debounces its runs per ${debounce.key} (the last request of ${periodSeconds} s runs): the request's metadata has no "${field}"`,
      },
    };
  return { debounce: { key: `${agent}:${field}=${value}`, periodSeconds } };
}

/** When a debounced run may start: `periodSeconds` after its request (`since`, when it was held). */
export function debounceEnds(since: string, debounce: RunDebounce): number {
  return Date.parse(since) + debounce.periodSeconds * 1000;
}
