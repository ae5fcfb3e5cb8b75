export * from './ports';
export * from './thread';
export * from './effects';
export * from './memory';
export * from './redaction';
export * from './payload';
export * from './approvals';
