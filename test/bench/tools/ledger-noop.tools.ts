/**
 * The ledger-path benchmark's tool (loaded with TOOL_MODULES by the bench's tool executor): an
 * idempotent no-op, so every call goes through the effect ledger on the executor — `started`, the
 * call, the outcome with its result message — instead of running inside the orchestrator's decision.
 */
import { z } from 'zod';
import { defineTool } from '@ratchet/tools';

export const ledgerNoop = defineTool({
  name: 'bench.ledger_noop',
  description: 'Does nothing, through the effect ledger, and returns {"ok": true}.',
  kind: 'idempotent',
  input: z.object({}),
  async execute() {
    return { ok: true };
  },
});
