export * from './test-database';
export * from './template-database';
export * from './contracts';
export * from './service-process';
