export * from './test-database';
export * from './template-database';
export * from './contracts';
export * from './service-process';
export * from './fake-model-server';
export * from './effect-service';
