export * from './effect.decider';
export * from './effect.transition';
