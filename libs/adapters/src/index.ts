export * from './nats';
export * from './models';
export * from './agents';
export * from './postgres';
export * from './memory';
export * from './memory-client';
export * from './webhooks';
