import path from 'node:path';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { terminal, TestStack } from './stack';

const AGENTS = path.resolve(__dirname, '../agents/loop');
const FLOOD = 600;
const principal = { id: 'alice', roles: ['runner'] };
const hello = (requestId: string) => ({
  requestId,
  agent: 'demo',
  input: [{ role: 'user' as const, content: 'hello' }],
  principal,
});

/**
 * Tenant "flood" publishes FLOOD run requests straight on NATS (no gateway rate limit in front), then
 * tenant "acme" publishes three. The orchestrator decides two requests at a time. The facts compared
 * are positions in the log (its global commit order), not durations.
 */
describe.each([
  { share: '50', fair: true },
  { share: '0', fair: false },
])('a tenant flooding run requests (TENANT_SHARE_PERCENT=$share)', ({ share, fair }) => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.create();
    await Promise.all([
      stack.start('orchestrator', { AGENTS_DIR: AGENTS, REQUEST_CONCURRENCY: '2', TENANT_SHARE_PERCENT: share }),
      stack.start('tool-executor'),
    ]);
  });
  afterAll(async () => {
    await stack.stop();
  });

  const position = async (tenant: string, type: string, which: 'min' | 'max') => {
    const rows = await stack.orchestratorDb.sql.query<{ p: string | null }>(
      `select ${which}(position)::text as p from ${stack.orchestratorDb.sql.table('thread_events')}
        where tenant_id = ? and type = ?`,
      [tenant, type],
    );
    return Number(rows[0]?.p ?? NaN);
  };

  it(
    fair
      ? "completes the other tenant's runs while the flood is still being admitted"
      : 'first come, first served: the other tenant waits for the whole flood (the case fair shares change)',
    async () => {
      const js = stack.nc.jetstream();
      const floodSubject = `${stack.prefix.subject}.requests.flood`;
      for (let i = 0; i < FLOOD; i += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, FLOOD - i) }, (_, j) =>
            js.publish(floodSubject, JSON.stringify(hello(`f-${i + j}`)), { msgID: `flood:f-${i + j}` }),
          ),
        );
      }
      for (const id of ['a-1', 'a-2', 'a-3']) await stack.publishRequest('acme', hello(id));

      for (const id of ['a-1', 'a-2', 'a-3'])
        await stack.waitFor('acme', threadIdFor('acme', id), terminal(runIdFor('acme', id)), 120_000);
      const acmeDone = await position('acme', 'run.completed', 'max');
      // Every run of both tenants completes: nothing is lost by waiting in line or by being deferred.
      const completed = async () =>
        stack.orchestratorDb.sql.query<{ tenant_id: string; n: number }>(
          `select tenant_id, count(*)::int as n from ${stack.orchestratorDb.sql.table('runs')}
            where status = 'completed' group by tenant_id order by tenant_id`,
        );
      const deadline = Date.now() + 120_000;
      while ((await completed()).find((c) => c.tenant_id === 'flood')?.n !== FLOOD && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 250));
      expect(await completed()).toEqual([
        { tenant_id: 'acme', n: 3 },
        { tenant_id: 'flood', n: FLOOD },
      ]);
      const floodLastAdmitted = await position('flood', 'run.requested', 'max');
      if (fair) {
        // acme's three runs were over before the flood's last request was even admitted.
        expect(acmeDone).toBeLessThan(floodLastAdmitted);
      } else {
        expect(await position('acme', 'run.requested', 'min')).toBeGreaterThan(floodLastAdmitted);
      }
    },
  );
});
