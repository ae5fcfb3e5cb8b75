import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import path from 'node:path';
import type { ToolResolveCommand } from '@ratchet/contracts';
import { openServiceDatabase, type Database } from '@ratchet/adapters';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import { EffectService } from '@ratchet/testing';
import { sleep, Stack } from '../bench/harness';
import { PrivatePostgres } from '../chaos/private-postgres';

/*
 * What a platform team's Postgres failover does to runs in flight (docs/deploy.md, "What a Postgres
 * failover does to runs in flight"): a private primary with a synchronous streaming standby, the
 * services connected through an address that follows the primary (a TCP proxy here, a read-write
 * Service or DNS name in a cluster). With runs of every tool kind in flight the primary is SIGKILLed, the
 * standby promoted and the address pointed at it. Every acknowledged commit was on the standby, so every
 * run ends once, no event is lost or doubled, and no effect repeats; an at-most-once call cut between its
 * effect and its outcome escalates to a human, as after any crash.
 */

jest.setTimeout(300_000);

const TENANT = 'failover';
const RUNS_PER_KIND = 8;
const KINDS = [
  { kind: 'pure', agent: 'effect-read' },
  { kind: 'idempotent', agent: 'effect-upsert' },
  { kind: 'at-most-once', agent: 'effect-charge' },
] as const;

/** A TCP address in front of Postgres that a failover repoints: its open connections are cut. */
class FailoverAddress {
  private server!: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private target: number) {}

  async start(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = createConnection({ host: '127.0.0.1', port: this.target });
      this.sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const close = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('close', close).on('error', close);
      upstream.on('close', close).on('error', close);
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** New connections go to `port`; the open ones are cut (their server is gone anyway). */
  repoint(port: number): void {
    this.target = port;
    for (const s of this.sockets) s.destroy();
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

describe('a Postgres failover to a synchronous standby while runs are in flight', () => {
  const service = new EffectService();
  let primary: PrivatePostgres;
  let standby: PrivatePostgres;
  let address: FailoverAddress;
  let stack: Stack;
  let tools: Database;

  beforeAll(async () => {
    await service.start();
    primary = await PrivatePostgres.start();
    standby = await PrivatePostgres.standbyOf(primary);
    await primary.sql(`alter system set synchronous_standby_names = 'standby'`);
    await primary.sql('select pg_reload_conf()');
    const deadline = Date.now() + 30_000;
    while ((await primary.sql<{ s: string }>(`select sync_state as s from pg_stat_replication`))[0]?.s !== 'sync') {
      if (Date.now() > deadline) throw new Error('the standby did not become synchronous');
      await sleep(100);
    }
    address = new FailoverAddress(primary.port);
    await address.start();
    stack = await Stack.create({ databaseServerUrl: `postgres://postgres@127.0.0.1:${address.port}/postgres` });
    tools = await openServiceDatabase(stack.testDb.url, 'tools');
    await stack.start('orchestrator', 'orchestrator', { AGENTS_DIR: path.resolve(__dirname, '../agents/effects') });
    await stack.start('tool-executor', 'tool-executor', { RATCHET_DEMO_EFFECT_URL: service.url });
  });
  afterAll(async () => {
    await stack?.stop();
    await tools?.close().catch(() => undefined);
    await address?.stop();
    await standby?.stop();
    await primary?.stop();
    await service.stop();
  });

  it('ends every run once, loses and doubles no event, repeats no effect', async () => {
    const runs = KINDS.flatMap(({ kind, agent }) =>
      Array.from({ length: RUNS_PER_KIND }, (_, i) => {
        const requestId = `fo-${kind}-${i}`;
        return { kind, agent, requestId, runId: runIdFor(TENANT, requestId), threadId: threadIdFor(TENANT, requestId) };
      }),
    );
    const ended = new Set<string>();
    const terminals = runs.map((r) => stack.waitTerminal(r.runId, 240_000).then((e) => (ended.add(r.runId), e)));
    for (const r of runs)
      await stack.publishRequest(TENANT, {
        requestId: r.requestId,
        agent: r.agent,
        input: [{ role: 'user', content: `item-${r.requestId}` }],
        principal: { id: 'alice', roles: ['runner'] },
      });
    // In flight: some calls have acted, most runs have not ended.
    await until(() => [...service.calls.values()].length + [...service.reads.values()].length >= 3);
    await primary.kill('SIGKILL');
    const inFlight = runs.length - ended.size;
    await standby.promote();
    address.repoint(standby.port);
    expect(inFlight).toBeGreaterThan(0);

    // An at-most-once call cut between its effect and its outcome waits for a human: answer as one who
    // checked the outside world.
    const answered = new Set<string>();
    const answering = (async () => {
      while (ended.size < runs.length) {
        const rows = await tools.sql
          .query<{ key: string }>(`select key from ${tools.sql.table('effects')} where state = 'uncertain'`)
          .catch(() => []);
        for (const { key } of rows) {
          if (answered.has(key)) continue;
          answered.add(key);
          const happened = (service.effects.get(key) ?? 0) > 0;
          const command: ToolResolveCommand = {
            kind: 'tool.resolve',
            commandId: `resolve:${key}`,
            tenantId: TENANT,
            idempotencyKey: key,
            resolution: happened
              ? { decision: 'happened', result: { effect: key, confirmedBy: 'sre' } }
              : { decision: 'retry' },
            by: 'sre',
          };
          await stack.nc.jetstream().publish(`${stack.prefix.subject}.cmd.tool.${TENANT}`, JSON.stringify(command), {
            msgID: command.commandId,
          });
        }
        await sleep(250);
      }
    })();
    const outcomes = await Promise.all(terminals);
    await answering;
    expect(outcomes.map((e) => e.type)).toEqual(runs.map(() => 'run.completed'));

    for (const r of runs) {
      const events = await stack.orchestratorDb.sql.query<{ version: number; type: string }>(
        `select version, type from ${stack.orchestratorDb.sql.table('thread_events')}
          where tenant_id = ? and thread_id = ? order by version`,
        [TENANT, r.threadId],
      );
      // Nothing lost, nothing doubled: a gapless log with one request, one result and one end.
      expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
      const count = (type: string) => events.filter((e) => e.type === type).length;
      expect([count('run.started'), count('tool.completed'), count('run.completed')]).toEqual([1, 1, 1]);
      const [effect] = await tools.sql.query<{ key: string; state: string }>(
        `select key, state from ${tools.sql.table('effects')} where tenant_id = ? and thread_id = ?`,
        [TENANT, r.threadId],
      );
      expect(effect?.state).toBe('succeeded');
      const key = effect!.key;
      if (r.kind === 'pure') expect(service.reads.get(key) ?? 0).toBeGreaterThanOrEqual(1);
      else expect(service.effects.get(key)).toBe(1);
      if (r.kind === 'at-most-once') expect(service.calls.get(key)).toBe(1);
    }
    // The standby took over as the primary: what the services wrote after the failover is there.
    expect((await standby.sql<{ r: boolean }>('select pg_is_in_recovery() as r'))[0]?.r).toBe(false);
  });
});

async function until(condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}
