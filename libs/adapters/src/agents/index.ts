export * from './agent-files.loader';
export * from './agent-definitions.repository';
export * from './tenant-slot-limits.repository';
export * from './tenant-agent-settings.repository';
