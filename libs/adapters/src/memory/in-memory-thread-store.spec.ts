import { contractColumns, outboxStoreContract, threadStoreContract, type ContractState } from '@ratchet/testing';
import { InMemoryThreadStore } from './in-memory-thread-store';

// contractColumns is what the Postgres adapter needs; referenced so both adapters run the same fixtures.
void contractColumns;

threadStoreContract('in-memory', async () => {
  const store = new InMemoryThreadStore<ContractState>();
  return { store, outbox: store };
});

outboxStoreContract('in-memory', async () => {
  const store = new InMemoryThreadStore<ContractState>();
  return { outbox: store, transaction: (work) => store.transaction(work) };
});
