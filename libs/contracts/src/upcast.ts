import { CURRENT_EVENT_VERSION, EVENT_TYPES, EventType, ThreadEvent, ThreadEventSchema } from './thread-events';

/** Upgrades the data of one event type from version `from` to `from + 1`. Pure; never edits stored rows. */
export type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

/**
 * Registered upcasters, keyed `"<type>@<from>"`. Every event type is at v1 today; when a type moves to
 * v2, its v1 → v2 function goes here and a v1 fixture stays in test/fixtures/events/ forever.
 */
export const UPCASTERS: Readonly<Record<string, Upcaster>> = {};

export class EventDecodeError extends Error {
  readonly code = 'event.undecodable';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EventDecodeError';
  }
}

/** Reads a stored or received event of any known version and returns it at the current version. */
export function decodeThreadEvent(raw: unknown): ThreadEvent {
  if (typeof raw !== 'object' || raw === null) throw new EventDecodeError('event is not an object');
  const record = raw as Record<string, unknown>;
  const type = record['type'];
  if (typeof type !== 'string' || !EVENT_TYPES.includes(type as EventType)) {
    throw new EventDecodeError(`unknown event type ${JSON.stringify(type)}`);
  }
  const current = CURRENT_EVENT_VERSION[type as EventType];
  let v = typeof record['v'] === 'number' ? record['v'] : NaN;
  if (!Number.isInteger(v) || v < 1 || v > current) {
    throw new EventDecodeError(`${type}: unsupported schema version ${String(record['v'])} (current is ${current})`);
  }
  let data = record['data'] as Record<string, unknown>;
  while (v < current) {
    const up = UPCASTERS[`${type}@${v}`];
    if (!up) throw new EventDecodeError(`${type}: no upcaster from v${v}`);
    data = up(data);
    v += 1;
  }
  const parsed = ThreadEventSchema.safeParse({ ...record, v, data });
  if (!parsed.success) {
    throw new EventDecodeError(`${type} v${v}: ${parsed.error.message}`, { cause: parsed.error });
  }
  return parsed.data as ThreadEvent;
}
