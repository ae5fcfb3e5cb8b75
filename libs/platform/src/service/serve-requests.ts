import type { Msg, NatsConnection, Subscription } from 'nats';

/**
 * Answers the NATS requests on `subject` in a queue group (each request answered by one instance): a
 * message's reply, from `answer` (which never rejects: a failure is an error reply), is sent back as JSON
 * once it settles. What every request/reply responder of the services does around its API.
 */
export function serveRequests(
  nc: NatsConnection,
  subject: string,
  queue: string,
  answer: (msg: Msg) => Promise<unknown>,
): Subscription {
  return nc.subscribe(subject, {
    queue,
    callback: (error, msg) => {
      if (error) return;
      void answer(msg).then((reply) => msg.respond(JSON.stringify(reply)));
    },
  });
}

/** Work started from a subscription's callbacks, which shutdown waits for once the subscription stops. */
export class InFlight {
  private readonly work = new Set<Promise<unknown>>();

  /** Tracks `work` until it settles. */
  add(work: Promise<unknown>): void {
    const tracked = work.finally(() => this.work.delete(tracked));
    this.work.add(tracked);
  }

  /** Resolves once every tracked piece of work has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.work]);
  }
}
