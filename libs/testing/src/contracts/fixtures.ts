import { randomUUID } from 'node:crypto';
import type { ThreadEvent } from '@ratchet/contracts';
import type { OutboxMessage } from '@ratchet/domain';

/** The projection state the contract suites store: small, but with the columns a mapper must extract. */
export interface ContractState {
  status: string;
  agent: string | null;
  activeRunId: string | null;
  count: number;
  note: string;
}

export const contractColumns = (s: ContractState) => ({ status: s.status, agent: s.agent, activeRunId: s.activeRunId });

export function newThreadRef(): { tenantId: string; threadId: string } {
  return { tenantId: `tn-${randomUUID().slice(0, 8)}`, threadId: `th-${randomUUID().slice(0, 8)}` };
}

const at = (version: number) => new Date(Date.UTC(2026, 10, 30, 12, 0, 0, version)).toISOString();

/** Version 1 is `thread.created`, later versions `run.resumed`: both valid for decodeThreadEvent. */
export function makeEvents(
  ref: { tenantId: string; threadId: string },
  fromVersion: number,
  count: number,
): ThreadEvent[] {
  return Array.from({ length: count }, (_, i): ThreadEvent => {
    const version = fromVersion + i;
    const envelope = {
      id: `ev-${randomUUID()}`,
      v: 1,
      tenantId: ref.tenantId,
      threadId: ref.threadId,
      version,
      at: at(version),
      causationId: `cause-${version}`,
      correlationId: 'corr-1',
    };
    return version === 1
      ? { ...envelope, type: 'thread.created', data: { createdBy: "o'brien ? \\ \u00e9" } }
      : {
          ...envelope,
          runId: 'run-1',
          trace: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
          type: 'run.resumed',
          data: { fromVersion: version - 1, reason: 'worker "died" ? $1', worker: `w${version}` },
        };
  });
}

export function makeMessages(count: number, subject = 'ratchet.test'): OutboxMessage[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `msg-${randomUUID()}`,
    subject: `${subject}.${i}`,
    headers: { 'Nats-Msg-Id': `m${i}`, traceparent: "it's ?" },
    payload: { n: i, text: "quote ' and ? and \\", nested: { list: [1, null, 'x'] } },
  }));
}

/** Resolves once `parties` callers are waiting: forces two transactions to overlap. */
export function barrier(parties: number): () => Promise<void> {
  let waiting = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return () => {
    waiting += 1;
    if (waiting === parties) release();
    return all;
  };
}
