import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { memorySubjectPattern } from '@ratchet/contracts';
import { InFlight, ServiceRuntime } from '@ratchet/platform';
import { MemoryApi, memoryRouteOf, type AnyMemoryReply } from '@ratchet/requests';
import type { Msg, Subscription } from 'nats';

/** One queue group: each request is answered by exactly one memory instance. */
export const MEMORY_QUEUE = 'memory';

/**
 * Core NATS request/reply on `<prefix>.memory.*.*` (memory answers calls; it consumes no stream).
 * Subscribed before readiness turns true; on shutdown the subscription is drained and in-flight
 * requests are answered before the connection closes.
 */
@Injectable()
export class MemoryResponder implements OnApplicationBootstrap, OnModuleDestroy {
  private subscription: Subscription | undefined;
  private readonly inFlight = new InFlight();

  constructor(
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Inject(MemoryApi) private readonly api: MemoryApi,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = this.runtime.nc.subscribe(memorySubjectPattern(this.runtime.subjects.prefix), {
      queue: MEMORY_QUEUE,
      callback: (error, msg) => {
        if (error) {
          this.runtime.logger.warn({ err: error }, 'memory subscription error');
          return;
        }
        this.inFlight.add(this.respond(msg));
      },
    });
    // The server has the subscription before readiness turns true: no early request finds no responder.
    await this.runtime.nc.flush();
  }

  async onModuleDestroy(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
    await this.inFlight.settled();
  }

  /** Never rejects: every request gets a reply, whatever went wrong. */
  private async respond(msg: Msg): Promise<void> {
    const started = Date.now();
    const reply = await this.answer(msg.subject, msg.data);
    if (msg.reply) msg.respond(new TextEncoder().encode(JSON.stringify(reply)));
    // Values and texts stay out of logs: they may be personal data.
    this.runtime.logger.debug(
      { subject: msg.subject, ok: reply.ok, code: reply.ok ? undefined : reply.error.code, ms: Date.now() - started },
      'memory request',
    );
  }

  private answer(subject: string, data: Uint8Array): Promise<AnyMemoryReply> {
    const route = memoryRouteOf(this.runtime.subjects.prefix, subject);
    if (!route.ok) return Promise.resolve(route);
    return this.api.answer(route.value.tenant, route.value.op, data);
  }
}
