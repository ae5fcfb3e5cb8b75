export * from './fixtures';
export * from './thread-store.contract';
export * from './outbox-store.contract';
