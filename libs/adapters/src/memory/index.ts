export * from './in-memory-thread-store';
