export * from './jetstream.context';
export * from './jetstream.exception-filter';
export * from './jetstream.transport';
export * from './on-its-subject';
