export * from './effect.decider';
