import { connect, type NatsConnection } from 'nats';
import {
  declareTopology,
  deleteTopology,
  natsServersAndAuth,
  openServiceDatabase,
  PgThreadStore,
  type Database,
} from '@ratchet/adapters';
import type { RunRequestInput, ThreadEvent } from '@ratchet/contracts';
import { foldEvents, initialThreadState, type ThreadState } from '@ratchet/domain';
import {
  createTestDatabase,
  ServiceProcess,
  testDatabaseKey,
  uniquePrefix,
  type ServiceName,
  type TestDatabase,
} from '@ratchet/testing';

/**
 * A whole Ratchet for one test file: its own database (copied from the migrated template), its own
 * subject and stream prefix on the shared nats-server, and services as real processes.
 */
export class TestStack {
  /** Running services by instance name (`orchestrator`, or e.g. `orchestrator-2` for a second replica). */
  readonly services = new Map<string, ServiceProcess>();
  private constructor(
    readonly testDb: TestDatabase,
    readonly prefix: { subject: string; stream: string },
    readonly nc: NatsConnection,
    readonly orchestratorDb: Database,
    readonly natsUrl: string,
  ) {}

  /**
   * `natsUrl`: one URL or a comma-separated list (a cluster's nodes); default NATS_URL. `prefix`: the
   * subject and stream prefixes (default a fresh pair; a private nats-server may take the deployment's).
   */
  static async create(
    options: { natsUrl?: string; prefix?: { subject: string; stream: string } } = {},
  ): Promise<TestStack> {
    const natsUrl = options.natsUrl ?? process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
    const testDb = await createTestDatabase();
    const prefix = options.prefix ?? uniquePrefix();
    const nc = await connect({ ...natsServersAndAuth(natsUrl), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    const db = await openServiceDatabase(testDb.url, 'orchestrator', undefined, testDatabaseKey());
    return new TestStack(testDb, prefix, nc, db, natsUrl);
  }

  get env(): Record<string, string> {
    return {
      DATABASE_URL: this.testDb.url,
      NATS_URL: this.natsUrl,
      RATCHET_SUBJECT_PREFIX: this.prefix.subject,
      RATCHET_STREAM_PREFIX: this.prefix.stream,
      SHUTDOWN_GRACE_MS: '2000',
      // A killed worker's unacked messages come back after this: short, so crash tests stay quick.
      RATCHET_ACK_WAIT_MS: '2000',
    };
  }

  async start(
    name: ServiceName,
    extraEnv: Record<string, string> = {},
    instance: string = name,
  ): Promise<ServiceProcess> {
    const svc = await ServiceProcess.start(name, { ...this.env, SERVICE_INSTANCE_ID: instance, ...extraEnv });
    this.services.set(instance, svc);
    return svc;
  }

  /** The thread's stored projection next to the fold of its log, for `diffProjections`. */
  async projectionAndFold(tenant: string, threadId: string) {
    const store = new PgThreadStore<ThreadState>(this.orchestratorDb, () => ({
      status: '',
      agent: null,
      activeRunId: null,
    }));
    const [stored, events] = await Promise.all([
      store.readProjection(tenant, threadId),
      store.readEvents(tenant, threadId),
    ]);
    return { stored, events, folded: foldEvents(initialThreadState(), events) };
  }

  /**
   * Publishes a run request the way another service would: on `<prefix>.requests.<tenant>`, with
   * `Nats-Msg-Id` = `<tenant>:<requestId>` (JetStream drops a copy within its duplicate window) unless
   * `msgId` says otherwise (a publisher sending the request again as a new message).
   */
  async publishRequest(
    tenant: string,
    request: RunRequestInput,
    msgId = `${tenant}:${request.requestId}`,
  ): Promise<void> {
    await this.nc.jetstream().publish(`${this.prefix.subject}.requests.${tenant}`, JSON.stringify(request), {
      msgID: msgId,
    });
  }

  /** What the gateway sends for `POST /v1/runs/{id}/cancel`: a `run.cancel` message to the thread's inbox. */
  async cancelRun(tenant: string, threadId: string, runId: string, reason: string, by = 'alice'): Promise<void> {
    await this.nc.jetstream().publish(
      `${this.prefix.subject}.inbox.${tenant}.${threadId}`,
      JSON.stringify({
        kind: 'run.cancel',
        messageId: `cancel-${runId}`,
        tenantId: tenant,
        threadId,
        runId,
        by,
        reason,
      }),
    );
  }

  events(tenant: string, threadId: string): Promise<ThreadEvent[]> {
    return new PgThreadStore(this.orchestratorDb, () => ({ status: '', agent: null, activeRunId: null })).readEvents(
      tenant,
      threadId,
    );
  }

  /** Polls the log until `done` holds (or fails with what the log and the services said). */
  async waitFor(
    tenant: string,
    threadId: string,
    done: (events: ThreadEvent[]) => boolean,
    timeoutMs = 30_000,
  ): Promise<ThreadEvent[]> {
    const deadline = Date.now() + timeoutMs;
    let events: ThreadEvent[] = [];
    while (Date.now() < deadline) {
      events = await this.events(tenant, threadId);
      if (done(events)) return events;
      await new Promise((r) => setTimeout(r, 100));
    }
    const logs = [...this.services.values()].map((s) => `--- ${s.name}\n${s.logs}`).join('\n');
    throw new Error(`timed out; the log has ${events.map((e) => e.type).join(', ') || 'no events'}\n${logs}`);
  }

  /**
   * Waits until the orchestrator has no unsent outbox row (the previous test's messages all published
   * and marked), so a process killed next leaves nothing for the next one's sweeper to re-send: a test
   * that counts failpoint hits must not count another test's leftovers.
   */
  async outboxSettled(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const unsent = async () =>
      (
        await this.orchestratorDb.sql.query<{ n: number }>(
          `select count(*)::int as n from ${this.orchestratorDb.sql.table('outbox')} where sent_at is null`,
        )
      )[0]?.n ?? 0;
    while ((await unsent()) > 0) {
      if (Date.now() > deadline) throw new Error(`the orchestrator outbox still has unsent rows after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Messages a durable consumer has been handed so far (its delivered sequence), on the stream of `subject`. */
  async deliveredTo(subject: string, consumer: string): Promise<number> {
    const jsm = await this.nc.jetstreamManager();
    const stream = await jsm.streams.find(subject);
    return (await jsm.consumers.info(stream, consumer)).delivered.consumer_seq;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.services.values()].map((s) => s.kill('SIGKILL')));
    const jsm = await this.nc.jetstreamManager();
    await deleteTopology(
      jsm,
      declareTopology({ subjectPrefix: this.prefix.subject, streamPrefix: this.prefix.stream }),
    );
    await this.nc.close();
    await this.orchestratorDb.close();
    await this.testDb.drop();
  }
}

export const terminal = (runId: string) => (events: ThreadEvent[]) =>
  events.some(
    (e) => e.runId === runId && (e.type === 'run.completed' || e.type === 'run.failed' || e.type === 'run.cancelled'),
  );
