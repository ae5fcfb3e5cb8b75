export * from './memory.access';
export * from './memory.decider';
export * from './memory.errors';
export * from './memory.limits';
export * from './memory.retention';
export * from './memory.text';
