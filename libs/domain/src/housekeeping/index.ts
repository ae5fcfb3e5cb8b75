export * from './housekeeping.decider';
