import type { AgentSlot, RunSlot } from '@ratchet/contracts';
import { metadataKey } from './metadata-key';

/** A request whose metadata does not give a value to one of its agent's concurrency keys. */
export interface SlotKeyMissing {
  code: 'request.slot_key_missing';
  message: string;
}

/**
 * The concurrency keys a run requested with `metadata` holds (ADR 0045): per slot of its agent,
 * `<slot name>=<value of its expression>` with the slot's max, or the tenant's own max for that slot
 * (`tenantMaxes`, by slot name; settings of slots the agent no longer declares are ignored). A
 * request whose metadata lacks a slot's field is refused, naming the slot and the field: a run that could
 * not be counted would escape the limit that was declared for it.
 */
export function runSlotsOf(
  slots: readonly AgentSlot[] | undefined,
  metadata: Readonly<Record<string, string>>,
  agent: string,
  tenantMaxes: Readonly<Record<string, number>> = {},
): { slots: RunSlot[] } | { error: SlotKeyMissing } {
  const out: RunSlot[] = [];
  for (const slot of slots ?? []) {
    const { field, value } = metadataKey(slot.key, metadata);
    const max = Object.hasOwn(tenantMaxes, slot.name) ? tenantMaxes[slot.name]! : slot.max;
    if (value === undefined)
      return {
        error: {
          code: 'request.slot_key_missing',
          message: `agent "${agent}" counts its runs per ${slot.key} (slot "${slot.name}", at most ${max} at once): the request's metadata has no "${field}"`,
        },
      };
    out.push({ key: `${slot.name}=${value}`, max });
  }
  return { slots: out };
}
