export * from './config-error';
export * from './env-fields';
export * from './base-config';
export * from './load-config';
export * from './exit-on-config-error';
