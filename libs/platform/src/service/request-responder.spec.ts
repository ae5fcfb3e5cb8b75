import type { Msg, NatsConnection, SubscriptionOptions } from 'nats';
import { RequestResponder } from './request-responder';
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
