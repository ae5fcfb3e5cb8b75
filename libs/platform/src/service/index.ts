export * from './logger';
export * from './routing.publisher';
export * from './service-runtime';
export * from './health.controller';
export * from './runtime.module';
export * from './start-service';
export * from './run-main';
export * from './topology';
