export * from './attributes';
export * from './telemetry';
export * from './spans';
