export * from './webhook.retry';
