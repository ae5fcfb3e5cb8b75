import { randomUUID } from 'node:crypto';

/** Request-derived ids are part of the wire contract; re-exported here for the services. */
export { runIdFor, threadIdFor } from '@ratchet/contracts';

export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}
