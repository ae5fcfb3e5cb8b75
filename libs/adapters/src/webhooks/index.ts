export * from './webhook-address';
