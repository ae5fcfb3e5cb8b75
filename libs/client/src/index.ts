export * from './ratchet.client';
