export * from './agent-files.loader';
export * from './agent-definitions.repository';
