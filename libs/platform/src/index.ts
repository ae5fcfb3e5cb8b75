export * from './config';
export * from './ids';
export * from './jetstream';
export * from './outbox';
export * from './service';
export * from './failpoints';
export * from './telemetry';
export * from './retention';
