import { randomUUID } from 'node:crypto';
import type { Clock, IdSource } from '@ratchet/domain';

/** Request-derived ids are part of the wire contract; re-exported here for the services. */
export { runIdFor, threadIdFor } from '@ratchet/contracts';

export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}

/** The injection token of a service's `Clock` (Nest providers). */
export const CLOCK = Symbol('Clock');

/** The machine's clock, for composition roots. */
export const systemClock: Clock = { now: () => new Date() };

/** Random ids (UUID v4, without dashes), for composition roots. */
export const randomIds: IdSource = { next: newId };
