export * from './connect';
export * from './jetstream.topology';
export * from './jetstream.publisher';
export * from './jetstream.consumer';
export * from './jetstream.settle';
export { isParseFailure, retryDecision } from './failure-classification';
