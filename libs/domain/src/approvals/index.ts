export * from './approval.decider';
