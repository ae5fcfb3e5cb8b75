import {
  contractColumns,
  createTestDatabase,
  outboxStoreContract,
  threadStoreContract,
  type ContractState,
  type TestDatabase,
} from '@ratchet/testing';
import { openServiceDatabase, type Database } from './';
import { PgOutboxStore } from './pg-outbox.store';
import { withServiceTx } from './pg-service-tx';
import { PgThreadStore } from './pg-thread-store';

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => {
  await testDb.drop();
});

/** A fresh connection per test; the outbox suite counts rows, so its tables start empty. */
async function open(service: 'orchestrator' | 'tools'): Promise<Database> {
  const db = await openServiceDatabase(testDb.url, service);
  await db.sql.run(`truncate ${db.sql.table('outbox')}, ${db.sql.table('inbox')}`);
  return db;
}

threadStoreContract('postgres', async () => {
  const db = await open('orchestrator');
  return {
    store: new PgThreadStore<ContractState>(db, contractColumns),
    outbox: new PgOutboxStore(db),
    close: () => db.close(),
  };
});

outboxStoreContract('postgres (thread store outbox)', async () => {
  const db = await open('orchestrator');
  const store = new PgThreadStore<ContractState>(db, contractColumns);
  return { outbox: new PgOutboxStore(db), transaction: (work) => store.transaction(work), close: () => db.close() };
});

outboxStoreContract('postgres (service transaction outbox)', async () => {
  const db = await open('tools');
  return { outbox: new PgOutboxStore(db), transaction: (work) => withServiceTx(db, work), close: () => db.close() };
});
