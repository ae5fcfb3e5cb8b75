export * from './retention-policy';
export * from './thread-projection';
export * from './thread-retention';
export * from './apply-retention';
