export * from './ids';
export * from './messages';
export * from './thread-events';
export * from './upcast';
export * from './wire';
export * from './subjects';
export * from './agent';
export * from './public-schemas';
