export * from './errors';
export * from './persistence';
export * from './model';
export * from './clock';
