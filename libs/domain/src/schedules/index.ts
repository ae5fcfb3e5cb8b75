export * from './schedule';
export * from './schedule.timing';
export * from './schedule.decider';
export * from './schedule.rules';
