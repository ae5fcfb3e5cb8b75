export * from './connect';
export * from './jetstream.topology';
export * from './jetstream.publisher';
export * from './jetstream.consumer';
