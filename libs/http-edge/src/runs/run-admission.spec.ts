import type { Backends } from '../backends/backends';
import { ProblemException } from '../problem-details';
import { RunAdmissionCheck } from './run-admission';

/** The orchestrators' answer to the admission query, as the gateway gets it. */
function check(reply: Record<string, unknown>): RunAdmissionCheck {
  const threads = (async () => ({ ok: true, known: false, waitingLimit: 0, waitingRuns: 0, ...reply })) as unknown;
  return new RunAdmissionCheck({ threads } as Pick<Backends, 'threads'>, { warn: () => undefined });
}

describe('the gateway’s admission check', () => {
  it('answers 429 tenant.runs_limit at the bound where the orchestrators refuse (and where they do not say)', async () => {
    for (const overBound of ['refuse', undefined]) {
      const refused = await check({ limit: 10, activeRuns: 10, ...(overBound ? { overBound } : {}) })
        .assertRoom('acme', 'req-1')
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ProblemException);
      expect((refused as ProblemException).problem).toMatchObject({
        status: 429,
        code: 'tenant.runs_limit',
        limit: 10,
      });
    }
  });

  it('lets the request through at the bound where the orchestrators queue it for admission', async () => {
    await expect(check({ limit: 10, activeRuns: 10, overBound: 'queue' }).assertRoom('acme', 'req-1')).resolves.toBe(
      undefined,
    );
  });

  it('still refuses at the bound on waiting runs, which does not queue', async () => {
    const refused = await check({ limit: 10, activeRuns: 0, overBound: 'queue', waitingLimit: 5, waitingRuns: 5 })
      .assertRoom('acme', 'req-1')
      .catch((e: unknown) => e);
    expect((refused as ProblemException).problem).toMatchObject({ code: 'tenant.waiting_runs_limit' });
  });
});
