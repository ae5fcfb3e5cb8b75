import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, Payload, type MicroserviceOptions } from '@nestjs/microservices';
import type { INestMicroservice } from '@nestjs/common';
import { throwError, timer, map } from 'rxjs';
import type { JetStreamManager, NatsConnection } from 'nats';
import { subjects } from '@ratchet/contracts';
import { PoisonMessageError, TransientError } from '@ratchet/domain';
import { connectNats, declareTopology, deleteTopology, JetStreamPublisher, type PoisonInfo } from '@ratchet/adapters';
import { JetStreamContext } from './jetstream.context';
import { JetStreamExceptionFilter } from './jetstream.exception-filter';
import { JetStreamServer } from './jetstream.transport';

jest.setTimeout(30_000);

const url = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const suffix = randomBytes(3).toString('hex');
const prefix = `ttransport${suffix}`;
const topology = declareTopology({ subjectPrefix: prefix, streamPrefix: `TTRANSPORT_${suffix}`, ackWaitMs: 1_000 });
const toolSubject = subjects(prefix).toolCommands('acme');
const commands = `TTRANSPORT_${suffix}_COMMANDS`;

interface Seen {
  data: unknown;
  subject: string;
  msgId: string | undefined;
  redeliveryCount: number;
  traceparent: string | undefined;
}
const seen: Seen[] = [];
const finished: string[] = [];

@Controller()
class ToolController {
  @EventPattern('tool-executor')
  async handle(@Payload() data: { mode: string; id: string }, @Ctx() ctx: JetStreamContext) {
    seen.push({
      data,
      subject: ctx.getSubject(),
      msgId: ctx.getMsgId(),
      redeliveryCount: ctx.getRedeliveryCount(),
      traceparent: ctx.getTraceparent(),
    });
    switch (data.mode) {
      case 'ok':
        break;
      case 'transient-once':
        if (ctx.getRedeliveryCount() === 0) throw new TransientError('provider unavailable');
        break;
      case 'poison':
        throw new PoisonMessageError('refers to nothing');
      case 'observable-error':
        return throwError(() =>
          ctx.getRedeliveryCount() === 0 ? new TransientError('later') : new PoisonMessageError('then never'),
        );
      case 'slow-observable':
        return timer(1_500).pipe(map(() => finished.push(data.id)));
      case 'slow':
        await new Promise((r) => setTimeout(r, 1_500));
        finished.push(data.id);
        break;
    }
    return undefined;
  }
}

@Module({ controllers: [ToolController] })
class ToolModule {}

describe('JetStreamServer (Nest transport)', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let publisher: JetStreamPublisher;
  let app: INestMicroservice | undefined;
  const poisoned: PoisonInfo[] = [];

  async function startApp(): Promise<INestMicroservice> {
    const server = new JetStreamServer({
      url,
      name: 'transport-int-spec',
      topology,
      onPoison: async (info) => {
        poisoned.push(info);
      },
      retryDelay: () => 50,
      pullExpiresMs: 1_000,
      stopTimeoutMs: 10_000,
    });
    const created = await NestFactory.createMicroservice<MicroserviceOptions>(ToolModule, {
      strategy: server,
      logger: ['error'],
    });
    created.useGlobalFilters(new JetStreamExceptionFilter());
    await created.listen();
    return created;
  }

  const consumerState = async () => {
    const ci = await jsm.consumers.info(commands, 'tool-executor');
    return { ackPending: ci.num_ack_pending, pending: ci.num_pending };
  };
  const byId = (id: string) => seen.filter((s) => (s.data as { id: string }).id === id);

  beforeAll(async () => {
    nc = await connectNats({ url, name: 'transport-int-spec-client' });
    jsm = await nc.jetstreamManager();
    publisher = new JetStreamPublisher(nc);
    app = await startApp();
  });
  afterAll(async () => {
    await app?.close();
    await deleteTopology(jsm, topology);
    await nc.close();
  });

  it('created only the consumer it handles', async () => {
    await expect(jsm.consumers.info(commands, 'tool-executor')).resolves.toBeDefined();
    await expect(jsm.consumers.info(commands, 'model-worker')).rejects.toThrow();
  });

  it('delivers a published message to the @EventPattern handler with its context, and acks it', async () => {
    await publisher.publish(
      toolSubject,
      { mode: 'ok', id: 'ok-1' },
      { msgId: 'ok-1', headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } },
    );
    await waitFor(() => byId('ok-1').length === 1);
    await sleep(2_000); // > ack_wait: it would be back if it were not acked
    expect(byId('ok-1')).toEqual([
      {
        data: { mode: 'ok', id: 'ok-1' },
        subject: toolSubject,
        msgId: 'ok-1',
        redeliveryCount: 0,
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      },
    ]);
    expect(await consumerState()).toEqual({ ackPending: 0, pending: 0 });
  });

  it('naks when the handler throws a TransientError, and the redelivery succeeds', async () => {
    await publisher.publish(toolSubject, { mode: 'transient-once', id: 'tr-1' }, { msgId: 'tr-1' });
    await waitFor(() => byId('tr-1').length === 2);
    await sleep(1_500);
    expect(byId('tr-1').map((s) => s.redeliveryCount)).toEqual([0, 1]);
    expect(await consumerState()).toEqual({ ackPending: 0, pending: 0 });
  });

  it('records and terms a poison message (the error type survives Nest with JetStreamExceptionFilter)', async () => {
    await publisher.publish(toolSubject, { mode: 'poison', id: 'p-1' }, { msgId: 'p-1' });
    await waitFor(() => poisoned.some((p) => p.msgId === 'p-1'));
    await sleep(1_500);
    expect(byId('p-1')).toHaveLength(1);
    expect(poisoned.filter((p) => p.msgId === 'p-1')).toEqual([
      expect.objectContaining({ reason: 'handler', errorMessage: 'refers to nothing', consumer: 'tool-executor' }),
    ]);
  });

  it('decides from an Observable result: an erroring stream naks, then terms', async () => {
    await publisher.publish(toolSubject, { mode: 'observable-error', id: 'o-1' }, { msgId: 'o-1' });
    await waitFor(() => poisoned.some((p) => p.msgId === 'o-1'));
    await sleep(1_500);
    expect(byId('o-1').map((s) => s.redeliveryCount)).toEqual([0, 1]);
  });

  it('acks only after an Observable result completed', async () => {
    await publisher.publish(toolSubject, { mode: 'slow-observable', id: 'so-1' }, { msgId: 'so-1' });
    await waitFor(() => byId('so-1').length === 1);
    await sleep(300);
    expect(await consumerState()).toEqual({ ackPending: 1, pending: 0 });
    await waitFor(() => finished.includes('so-1'));
    await waitFor(async () => (await consumerState()).ackPending === 0);
    expect(byId('so-1')).toHaveLength(1); // ran past ack_wait without a redelivery
  });

  it('close() lets an in-flight handler finish and ack, then stops', async () => {
    await publisher.publish(toolSubject, { mode: 'slow', id: 's-1' }, { msgId: 's-1' });
    await waitFor(() => byId('s-1').length === 1);
    await app!.close();
    app = undefined;
    expect(finished).toContain('s-1');
    expect(await consumerState()).toEqual({ ackPending: 0, pending: 0 });

    await publisher.publish(toolSubject, { mode: 'ok', id: 'after-close' }, { msgId: 'after-close' });
    await sleep(1_000);
    expect(byId('after-close')).toHaveLength(0);
    expect(await consumerState()).toEqual({ ackPending: 0, pending: 1 });

    app = await startApp();
    await waitFor(() => byId('after-close').length === 1);
  });

  it('refuses to listen when a pattern names no consumer', async () => {
    @Controller()
    class Wrong {
      @EventPattern('no-such-consumer')
      handle() {}
    }
    @Module({ controllers: [Wrong] })
    class WrongModule {}
    const wrong = await NestFactory.createMicroservice<MicroserviceOptions>(WrongModule, {
      strategy: new JetStreamServer({ url, name: 'wrong', topology, onPoison: async () => {} }),
      logger: false,
    });
    await expect(wrong.listen()).rejects.toThrow(/no-such-consumer.*names no consumer/);
    await wrong.close();
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('timed out waiting for condition');
    await sleep(20);
  }
}
