import { subjects, type ModelCallCommand } from '@ratchet/contracts';
import type { NatsConnection } from 'nats';
import { TokenStream } from './token-stream';

/** A connection that closes like the worker's does on SIGTERM: publish throws once it is closed. */
function connection() {
  const state = { closed: false, published: [] as string[] };
  const nc = {
    isClosed: () => state.closed,
    isDraining: () => false,
    publish: (_subject: string, data: string) => {
      if (state.closed) throw new Error('CONNECTION_CLOSED');
      state.published.push(data);
    },
  } as unknown as NatsConnection;
  return { nc, state };
}

const command = {
  tenantId: 't1',
  threadId: 'th1',
  runId: 'r1',
  step: 1,
  attempt: 1,
  commandId: 'c1',
} as unknown as ModelCallCommand;

describe('TokenStream', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('given a piece gathered for a later flush, when the connection closes first, then the flush drops it without throwing', () => {
    const { nc, state } = connection();
    const sink = new TokenStream(nc, subjects('p')).open(command);
    sink.delta({ text: 'Hel' });
    sink.delta({ text: 'lo' });
    expect(state.published.map((p) => (JSON.parse(p) as { kind: string }).kind)).toEqual(['reset', 'delta']);

    state.closed = true;
    expect(() => jest.runOnlyPendingTimers()).not.toThrow();
    expect(() => sink.close()).not.toThrow();
    expect(state.published).toHaveLength(2);
  });
});
