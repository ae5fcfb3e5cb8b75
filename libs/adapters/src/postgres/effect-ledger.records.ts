import type { OutboxMessage } from '@ratchet/domain';
import { isoColumn } from './sql';

export type EffectState = 'started' | 'succeeded' | 'failed' | 'uncertain' | 'cancelled';

export interface StartEffect {
  /** The idempotency key: one row per effect, however often the command is delivered. */
  key: string;
  tenantId: string;
  threadId: string;
  runId: string;
  callId: string;
  tool: string;
  kind: string;
  /** The command that started the effect: a human's `retry` runs it again, and any answer reaches its thread. */
  command?: unknown;
  /** The W3C traceparent of the span claiming the effect, for a later attempt's span link. */
  traceparent?: string | undefined;
}

export type EffectResolution = 'happened' | 'retry' | 'fail';

export interface EffectRecord extends Omit<StartEffect, 'command' | 'traceparent'> {
  state: EffectState;
  attempts: number;
  result: unknown;
  /** Redeliveries answered from the ledger instead of running the tool. */
  dedupHits: number;
  command: unknown;
  resolution: EffectResolution | null;
  resolvedBy: string | null;
  resolvedAt: string | null;
  startedAt: string;
  finishedAt: string | null;
  updatedAt: string;
  /** The span of the attempt that last claimed the effect (started or retried it); null before it was kept. */
  traceparent: string | null;
  /** While `started`: the executor acting on it, and until when (it renews while the tool runs). */
  leasedBy: string | null;
  leaseUntil: string | null;
  /** Whether another executor holds it right now (its lease runs): it is acting, leave it alone. */
  heldElsewhere: boolean;
}

/** Who claims an effect, and for how long (renewed while the tool runs). */
export interface EffectHolder {
  holder: string;
  leaseMs: number;
}

export interface EffectDbRow {
  key: string;
  tenant_id: string;
  thread_id: string;
  run_id: string;
  call_id: string;
  tool: string;
  kind: string;
  state: EffectState;
  attempts: number;
  result: unknown;
  dedup_hits: number;
  command: unknown;
  resolution: EffectResolution | null;
  resolved_by: string | null;
  resolved_at: string | null;
  started_at: string;
  finished_at: string | null;
  updated_at: string;
  traceparent: string | null;
  leased_by: string | null;
  lease_until: string | null;
  lease_live: boolean;
}

export const COLUMNS = `key, tenant_id, thread_id, run_id, call_id, tool, kind, state, attempts, result, dedup_hits,
  command, resolution, resolved_by, ${isoColumn('resolved_at')},
  ${isoColumn('started_at')}, ${isoColumn('finished_at')}, ${isoColumn('updated_at')}, traceparent,
  leased_by, ${isoColumn('lease_until')}, coalesce(state = 'started' and lease_until > now(), false) as lease_live`;

export function toRecord(r: EffectDbRow, holder?: string): EffectRecord {
  return {
    key: r.key,
    tenantId: r.tenant_id,
    threadId: r.thread_id,
    runId: r.run_id,
    callId: r.call_id,
    tool: r.tool,
    kind: r.kind,
    state: r.state,
    attempts: r.attempts,
    result: r.result,
    dedupHits: r.dedup_hits,
    command: r.command,
    resolution: r.resolution,
    resolvedBy: r.resolved_by,
    resolvedAt: r.resolved_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    updatedAt: r.updated_at,
    traceparent: r.traceparent,
    leasedBy: r.leased_by,
    leaseUntil: r.lease_until,
    heldElsewhere: r.lease_live && r.leased_by !== null && r.leased_by !== holder,
  };
}

/** key, tenant_id, thread_id, run_id, call_id, tool, kind: the columns naming an effect, in that order. */
export function effectIdentity(effect: StartEffect): unknown[] {
  return [effect.key, effect.tenantId, effect.threadId, effect.runId, effect.callId, effect.tool, effect.kind];
}

/** command, traceparent: what started the effect (a human's `retry` runs the command again), as values. */
export function startedByValues(effect: StartEffect): unknown[] {
  return [effect.command === undefined ? null : JSON.stringify(effect.command), effect.traceparent ?? null];
}

/** id, subject, headers, payload: an outbox row's values, in that order. */
export function outboxValues(message: OutboxMessage): unknown[] {
  return [message.id, message.subject, JSON.stringify(message.headers), JSON.stringify(message.payload)];
}
