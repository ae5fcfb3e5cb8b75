import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { tenantOpOfSubject } from '@ratchet/contracts';
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

/** What a tenant's request answers when it could not be answered: the subject named no tenant, or the store failed. */
export interface TenantRequestFailure {
  ok: false;
  error: { code: 'invalid' | 'unavailable'; message: string };
}

const failure = (code: TenantRequestFailure['error']['code'], message: string): TenantRequestFailure => ({
  ok: false,
  error: { code, message },
});

/**
 * A responder for one area's requests on `<prefix>.<area>.<tenant>.<op>`: the tenant is the subject's,
 * never the body's. A subject that names no tenant answers `invalid`; an answer that throws (its store
 * did not answer) is logged and answers `unavailable`, for the caller to retry.
 */
export abstract class TenantRequestResponder extends RequestResponder {
  protected constructor(
    runtime: ServiceRuntime,
    queue: string,
    /** The subject's second token: `webhooks`, `schedules`. */
    private readonly area: string,
  ) {
    super(runtime, queue);
  }

  /** The area's reply to a request of `tenantId`; may throw when its store does not answer. */
  abstract answer(tenantId: string, data: Uint8Array): Promise<unknown>;

  protected async reply(msg: Msg): Promise<unknown> {
    const scope = tenantOpOfSubject(this.runtime.subjects.prefix, this.area, msg.subject);
    try {
      return scope
        ? await this.answer(scope.tenant, msg.data)
        : failure('invalid', `not a ${this.area} subject: ${msg.subject}`);
    } catch (error) {
      this.runtime.logger.warn({ err: error }, `${this.area} request failed`);
      return failure('unavailable', `the ${this.area} store did not answer; retry`);
    }
  }
}
