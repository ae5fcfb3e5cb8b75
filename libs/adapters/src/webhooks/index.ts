export * from './webhook-address';
export * from './webhook-signature';
