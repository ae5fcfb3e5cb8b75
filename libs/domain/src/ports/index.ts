export * from './errors';
export * from './persistence';
