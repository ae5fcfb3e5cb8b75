import { plural } from '../context';
import type { ThreadState } from '@ratchet/domain';

/**
 * Why a thread cannot be moved (exported, imported) now, or undefined when it is idle. A thread with
 * a run going, run requests queued or tool calls of an ended run still waiting for their outcome has
 * effects and approvals in flight that an export does not carry: the destination could repeat an
 * at-most-once effect or lose an approval. Move it once it is idle.
 */
export function notIdleReason(state: ThreadState): string | undefined {
  if (state.active) return `run ${state.active.runId} is going`;
  if (state.queue.length > 0) return `its queue holds ${plural(state.queue.length, 'run request')}`;
  const settling = state.settling?.length ?? 0;
  if (settling > 0) return `an ended run has ${plural(settling, 'tool call')} waiting for their outcome`;
  return undefined;
}
