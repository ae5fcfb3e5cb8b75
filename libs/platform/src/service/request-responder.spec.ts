import type { Msg, NatsConnection, SubscriptionOptions } from 'nats';
import { RequestResponder, TenantRequestResponder } from './request-responder';
import type { ServiceRuntime } from './service-runtime';

class EchoResponder extends RequestResponder {
  constructor(runtime: ServiceRuntime) {
    super(runtime, 'echo-queue');
  }

  protected subject(): string {
    return 'x.echo.*';
  }

  protected reply(msg: Msg): Promise<unknown> {
    return Promise.resolve({ ok: true, subject: msg.subject });
  }
}

describe('RequestResponder: one subject answered in a queue group from bootstrap to shutdown', () => {
  it('subscribes at bootstrap, sends each reply back as JSON, and drains before shutdown', async () => {
    const drain = jest.fn(() => Promise.resolve());
    let subscribed: { subject: string; opts: SubscriptionOptions } | undefined;
    const nc = {
      subscribe: (subject: string, opts: SubscriptionOptions) => {
        subscribed = { subject, opts };
        return { drain };
      },
    } as unknown as NatsConnection;
    const responder = new EchoResponder({ nc } as unknown as ServiceRuntime);

    responder.onApplicationBootstrap();
    expect(subscribed?.subject).toBe('x.echo.*');
    expect(subscribed?.opts.queue).toBe('echo-queue');

    const respond = jest.fn();
    subscribed?.opts.callback?.(null, { subject: 'x.echo.t1', respond } as unknown as Msg);
    await new Promise((resolve) => setImmediate(resolve));
    expect(respond).toHaveBeenCalledWith(JSON.stringify({ ok: true, subject: 'x.echo.t1' }));

    await responder.beforeApplicationShutdown();
    expect(drain).toHaveBeenCalledTimes(1);
  });
});

class AreaResponder extends TenantRequestResponder {
  readonly asked: string[] = [];

  constructor(runtime: ServiceRuntime) {
    super(runtime, 'area-queue', 'area');
  }

  protected subject(): string {
    return 'x.area.*.*';
  }

  answer(tenantId: string): Promise<unknown> {
    this.asked.push(tenantId);
    if (tenantId === 'down') return Promise.reject(new Error('store down'));
    return Promise.resolve({ ok: true, tenantId });
  }
}

describe('TenantRequestResponder: the tenant is the subject’s', () => {
  const warn = jest.fn();
  const runtime = { subjects: { prefix: 'x' }, logger: { warn } } as unknown as ServiceRuntime;
  const replyTo = (responder: AreaResponder, subject: string) =>
    (responder as unknown as { reply(msg: Msg): Promise<unknown> }).reply({
      subject,
      data: new Uint8Array(),
    } as unknown as Msg);

  it('answers for the tenant its subject names', async () => {
    const responder = new AreaResponder(runtime);
    await expect(replyTo(responder, 'x.area.t1.list')).resolves.toEqual({ ok: true, tenantId: 't1' });
    expect(responder.asked).toEqual(['t1']);
  });

  it('given a subject that names no tenant, answers invalid without asking the area', async () => {
    const responder = new AreaResponder(runtime);
    await expect(replyTo(responder, 'x.other.t1.list')).resolves.toEqual({
      ok: false,
      error: { code: 'invalid', message: 'not a area subject: x.other.t1.list' },
    });
    expect(responder.asked).toEqual([]);
  });

  it('given an answer that throws, logs it and answers unavailable', async () => {
    const responder = new AreaResponder(runtime);
    await expect(replyTo(responder, 'x.area.down.list')).resolves.toEqual({
      ok: false,
      error: { code: 'unavailable', message: 'the area store did not answer; retry' },
    });
    expect(warn).toHaveBeenCalledWith({ err: expect.any(Error) }, 'area request failed');
  });
});
