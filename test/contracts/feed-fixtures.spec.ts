import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { decodeThreadEvent, feedEvents, FeedVersionError } from '@ratchet/contracts';

/*
 * A fixture of each feed version (ADR 0042): v1 is one event per message (`{prefix}.events.…`), v2 one
 * decision per message (`{prefix}.feed.…`). A v2 reader reads v2 and refuses v1 by name; the v2 fixture
 * fits the published JSON Schema.
 */
const dir = path.resolve(__dirname, '../fixtures/feed');
const read = (file: string) => JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Record<string, unknown>;

describe('feed fixtures, one per version', () => {
  it('v2: a decision whose events decode with the current code, in version order', () => {
    const events = feedEvents(read('feed.v2.json')).map((e) => decodeThreadEvent(e));
    expect(events.length).toBeGreaterThan(1);
    expect(events.map((e) => e.version)).toEqual(events.map((_, i) => events[0]!.version + i));
  });

  it('v2 fits docs/schemas/FeedDecision.schema.json', () => {
    const schema = JSON.parse(
      readFileSync(path.resolve(__dirname, '../../docs/schemas/FeedDecision.schema.json'), 'utf8'),
    ) as object;
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    expect([validate(read('feed.v2.json')), validate.errors]).toEqual([true, null]);
    expect(validate(read('feed.v1.json'))).toBe(false);
  });

  it('v1: an event, which a v2 reader refuses with a version error instead of misreading it', () => {
    const v1 = read('feed.v1.json');
    expect(decodeThreadEvent(v1).id).toBe(v1['id']);
    expect(() => feedEvents(v1, 'ratchet.events.acme.th')).toThrow(FeedVersionError);
  });
});
