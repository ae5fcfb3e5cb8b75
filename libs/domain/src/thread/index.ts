export * from './thread.state';
export * from './thread.commands';
export * from './thread.evolve';
export * from './thread.record';
export * from './thread.decider';
export * from './projection.diff';
export * from './thread.projection-rows';
export * from './canonical-json';
