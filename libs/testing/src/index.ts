export { createTestDatabase, uniquePrefix, type NatsPrefix, type TestDatabase } from './test-database';
export {
  databaseUrl,
  ensureBaseDatabase,
  ensureTemplate,
  newTestDatabaseName,
  openAdmin,
  randomToken,
  sweepStaleDatabases,
  TEMPLATE_PREFIX,
  templateName,
  TEST_DATABASE_PREFIX,
  testDatabaseCreatedAt,
} from './template-database';
export {
  barrier,
  contractColumns,
  makeEvents,
  makeMessages,
  newThreadRef,
  type ContractState,
} from './contracts/fixtures';
export { threadStoreContract, type ThreadStoreFixture } from './contracts/thread-store.contract';
export { outboxStoreContract, type OutboxStoreFixture } from './contracts/outbox-store.contract';
export { freePort, runProcess, ServiceProcess, sourceCommand, type ServiceName } from './service-process';
export { FakeModelServer, type ConversationStats } from './fake-model-server';
export { EffectService } from './effect-service';
export { demoCity, ledgerEffects, weatherRunRequest, type LedgerEffectRow } from './fleet-runs';
export { requestRunCommand } from './thread-commands';
export { DEMO_RUN, DEMO_TENANT, DEMO_THREAD, demoRunEvents } from './demo-run.events';
export { testDatabaseKey, testKeyFile, testMasterKey } from './master-key';
