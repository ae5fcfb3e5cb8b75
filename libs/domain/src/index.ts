export * from './ports';
export * from './thread';
