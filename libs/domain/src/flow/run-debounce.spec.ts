import { debounceEnds, runDebounceOf } from './run-debounce';

describe('the debounce of a run', () => {
  it('is keyed by the agent alone, or by the agent and the value of its field in the metadata', () => {
    expect(runDebounceOf({ periodSeconds: 5 }, { documentId: '9' }, 'indexer')).toEqual({
      debounce: { key: 'indexer', periodSeconds: 5 },
    });
    expect(runDebounceOf({ periodSeconds: 5, key: 'metadata.documentId' }, { documentId: '9' }, 'indexer')).toEqual({
      debounce: { key: 'indexer:documentId=9', periodSeconds: 5 },
    });
  });

  it('refuses a request whose metadata lacks the key, naming the field', () => {
    for (const metadata of [{}, { documentId: '' }] as Record<string, string>[])
      expect(runDebounceOf({ periodSeconds: 5, key: 'metadata.documentId' }, metadata, 'indexer')).toEqual({
        error: {
          code: 'request.debounce_key_missing',
          message:
            'agent "indexer" debounces its runs per metadata.documentId (the last request of 5 s runs): the request\'s metadata has no "documentId"',
        },
      });
  });

  it('is none for an agent without a debounce', () => {
    expect(runDebounceOf(undefined, { documentId: '9' }, 'indexer')).toEqual({});
  });

  it('ends a period after the request', () => {
    expect(debounceEnds('2026-12-07T10:00:00.000Z', { key: 'indexer', periodSeconds: 5 })).toBe(
      Date.parse('2026-12-07T10:00:05.000Z'),
    );
  });
});
