export * from './redact';
