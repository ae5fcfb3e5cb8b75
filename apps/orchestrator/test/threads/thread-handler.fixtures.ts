import { openServiceDatabase, PgThreadStore, type Database } from '@ratchet/adapters';
import { createTestDatabase, requestRunCommand, testDatabaseKey, type TestDatabase } from '@ratchet/testing';
import {
  modelCommandId,
  type CommittedPublisher,
  type OutboxMessage,
  type RecordModelResult,
  type RequestRun,
  type ThreadState,
  type ThreadTx,
} from '@ratchet/domain';
import { subjects } from '@ratchet/contracts';
import { ThreadCommandHandler, type ThreadEngineDeps } from '@ratchet/engine';
import { orchestratorEngineDeps } from '../../src/threads/engine-deps';

// What the thread handler's int tests share: their database, a counting store, a checking publisher, messages.

/**
 * For the calling test file: a fresh copy of the migrated template with its orchestrator schema opened
 * (handed to `opened` before the tests run), closed and dropped after them.
 */
export function orchestratorDatabase(opened: (db: Database) => void): void {
  let testDb: TestDatabase | undefined;
  let db: Database | undefined;
  beforeAll(async () => {
    testDb = await createTestDatabase();
    db = await openServiceDatabase(testDb.url, 'orchestrator', undefined, testDatabaseKey());
    opened(db);
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });
}

/** The engine as the orchestrator composes it, on subject prefix `t`, with `extra` of its dependencies. */
export function handlerOf(
  store: ThreadEngineDeps['store'],
  relay: CommittedPublisher,
  extra: Partial<Omit<ThreadEngineDeps, 'store' | 'relay'>> = {},
): ThreadCommandHandler {
  return new ThreadCommandHandler(orchestratorEngineDeps({ store, relay, subjects: subjects('t'), ...extra }));
}

/** Counts transactions and the messages each claimed, so a test can tell grouped commits from single ones. */
export class CountingStore extends PgThreadStore<ThreadState> {
  transactions = 0;
  claimed: string[][] = [];
  override transaction<T>(work: (tx: ThreadTx<ThreadState>) => Promise<T>): Promise<T> {
    this.transactions++;
    return super.transaction((tx) =>
      work({
        ...tx,
        claimAndLoadMany: (items) => {
          this.claimed.push(items.map((i) => i.messageId));
          return tx.claimAndLoadMany(items);
        },
      }),
    );
  }
}

/**
 * Records what the handler hands over, at the moment it does (the handler does not wait for publishes),
 * and checks in the background that each row was committed by then; `uncommitted` after `settled()`.
 */
export class CheckingPublisher implements CommittedPublisher {
  constructor(private readonly db: Database) {}
  published: OutboxMessage[] = [];
  uncommitted: string[] = [];
  private readonly checks: Promise<void>[] = [];
  publishCommitted(messages: readonly OutboxMessage[]): Promise<number> {
    if (messages.length === 0) return Promise.resolve(0);
    this.published.push(...messages);
    const check = this.db.sql
      .query<{ id: string }>(`select id from ${this.db.sql.table('outbox')} where id in (?)`, [
        messages.map((m) => m.id),
      ])
      .then((rows) => {
        const seen = new Set(rows.map((r) => r.id));
        this.uncommitted.push(...messages.filter((m) => !seen.has(m.id)).map((m) => m.id));
      });
    this.checks.push(check);
    return check.then(() => messages.length);
  }
  async settled(): Promise<void> {
    await Promise.all(this.checks);
  }
}

export function request(tenantId: string, threadId: string, runId: string): RequestRun {
  return requestRunCommand(tenantId, threadId, runId, new Date().toISOString());
}

export const meta = (runId: string) => ({ correlationId: runId });

/** The model's answer to step 1 of `runId`: text (`content`) or tool calls. */
export function answer(
  tenantId: string,
  threadId: string,
  runId: string,
  content: string | null = 'done',
  toolCalls: { id: string; name: string; args: Record<string, string> }[] = [],
): RecordModelResult {
  return {
    type: 'RecordModelResult',
    tenantId,
    threadId,
    at: new Date().toISOString(),
    runId,
    step: 1,
    commandId: modelCommandId(runId, 1, 1),
    outcome: { status: 'ok', content, toolCalls, usage: { inputTokens: 1, outputTokens: 1 }, model: 'scripted' },
  };
}

export async function eventTypes(db: Database, tenantId: string, threadId: string): Promise<string[]> {
  const rows = await db.sql.query<{ type: string }>(
    `select type from ${db.sql.table('thread_events')} where tenant_id = ? and thread_id = ? order by version`,
    [tenantId, threadId],
  );
  return rows.map((r) => r.type);
}
