import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CURRENT_EVENT_VERSION, decodeThreadEvent, EVENT_TYPES, EventDecodeError } from '@ratchet/contracts';

const dir = path.resolve(__dirname, '../fixtures/events');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

describe('stored event fixtures', () => {
  it('cover every event type at every version up to the current one', () => {
    const missing: string[] = [];
    for (const type of EVENT_TYPES) {
      for (let v = 1; v <= CURRENT_EVENT_VERSION[type]; v++) {
        if (!files.includes(`${type}.v${v}.json`)) missing.push(`${type}.v${v}.json`);
      }
    }
    expect(missing).toEqual([]);
  });

  it.each(files)('%s decodes with the current code', (file) => {
    const raw = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { type: string; v: number };
    const event = decodeThreadEvent(raw);
    expect(event.type).toBe(raw.type);
    expect(event.v).toBe(CURRENT_EVENT_VERSION[event.type]);
    expect(`${raw.type}.v${raw.v}.json`).toBe(file);
  });

  it('refuses an unknown type and a version from the future, naming them', () => {
    const raw = JSON.parse(readFileSync(path.join(dir, 'run.started.v1.json'), 'utf8')) as Record<string, unknown>;
    expect(() => decodeThreadEvent({ ...raw, type: 'run.exploded' })).toThrow(/unknown event type "run.exploded"/);
    expect(() => decodeThreadEvent({ ...raw, v: 99 })).toThrow(EventDecodeError);
  });
});
