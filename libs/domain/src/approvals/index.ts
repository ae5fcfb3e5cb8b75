export * from './approval.decider';
export * from './waitpoint.decider';
