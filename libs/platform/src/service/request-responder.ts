import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import type { Msg, Subscription } from 'nats';
import type { ServiceRuntime } from './service-runtime';
import { serveRequests } from './serve-requests';

/**
 * A service's NATS request/reply responder on one subject, in a queue group: subscribed at bootstrap
 * (`serveRequests`), drained before shutdown. Subclasses name the subject and answer each message.
 */
export abstract class RequestResponder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private sub: Subscription | undefined;

  protected constructor(
    protected readonly runtime: ServiceRuntime,
    private readonly queue: string,
  ) {}

  /** The subject (a wildcard pattern) the requests arrive on. */
  protected abstract subject(): string;

  /** A message's reply; never rejects (a failure is an error reply). */
  protected abstract reply(msg: Msg): Promise<unknown>;

  onApplicationBootstrap(): void {
    this.sub = serveRequests(this.runtime.nc, this.subject(), this.queue, (msg) => this.reply(msg));
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.sub?.drain();
  }
}
