import { runThrottleOf } from './run-throttle';

describe('the throttle of a run', () => {
  it('is keyed by the agent alone when its throttle has no key', () => {
    expect(runThrottleOf({ limit: 10, periodSeconds: 60 }, { userId: '7' }, 'support')).toEqual({
      throttle: { key: 'support', limit: 10, periodSeconds: 60 },
    });
  });

  it("is keyed by the agent and the value of its field in the request's metadata", () => {
    expect(runThrottleOf({ limit: 10, periodSeconds: 60, key: 'metadata.userId' }, { userId: '7' }, 'support')).toEqual(
      {
        throttle: { key: 'support:userId=7', limit: 10, periodSeconds: 60 },
      },
    );
  });

  it("takes the tenant's own limit and period in place of the agent's", () => {
    expect(runThrottleOf({ limit: 10, periodSeconds: 60 }, {}, 'support', { limit: 2 })).toEqual({
      throttle: { key: 'support', limit: 2, periodSeconds: 60 },
    });
    expect(runThrottleOf({ limit: 10, periodSeconds: 60 }, {}, 'support', { limit: 3, periodSeconds: 5 })).toEqual({
      throttle: { key: 'support', limit: 3, periodSeconds: 5 },
    });
  });

  it('refuses a request whose metadata lacks the key, naming the field', () => {
    for (const metadata of [{}, { userId: '' }] as Record<string, string>[])
      expect(runThrottleOf({ limit: 10, periodSeconds: 60, key: 'metadata.userId' }, metadata, 'support')).toEqual({
        error: {
          code: 'request.throttle_key_missing',
          message:
            'agent "support" throttles its runs per metadata.userId (at most 10 starts per 60 s): the request\'s metadata has no "userId"',
        },
      });
  });

  it("is none for an agent without a throttle, unless the tenant's settings give both a limit and a period", () => {
    expect(runThrottleOf(undefined, { userId: '7' }, 'support')).toEqual({});
    expect(runThrottleOf(undefined, {}, 'support', { limit: 5 })).toEqual({});
    expect(runThrottleOf(undefined, {}, 'support', { limit: 5, periodSeconds: 60 })).toEqual({
      throttle: { key: 'support', limit: 5, periodSeconds: 60 },
    });
  });
});
