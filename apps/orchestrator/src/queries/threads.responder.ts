import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Subscription } from 'nats';
import { parseThreadsSubject, threadsSubjectPattern } from '@ratchet/contracts';
import { serveRequests, ServiceRuntime } from '@ratchet/platform';
import { ThreadsApi, threadsInvalid, type AnyThreadsReply } from '@ratchet/requests';
import { RUN_ADMISSION, type RunAdmission } from '../threads/run-request.controller';

/**
 * Threads, runs and events over NATS request/reply on `<prefix>.threads.<tenant>.<op>` (see `ThreadsApi`;
 * the gateway's read API relays here). The tenant is the subject's, bound by NATS permissions.
 */
@Injectable()
export class ThreadsQueryResponder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private sub: Subscription | undefined;
  private readonly api: ThreadsApi;

  constructor(
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Inject(RUN_ADMISSION) admission: RunAdmission,
  ) {
    this.api = new ThreadsApi(runtime, admission);
  }

  onApplicationBootstrap(): void {
    const { nc, subjects } = this.runtime;
    this.sub = serveRequests(nc, threadsSubjectPattern(subjects.prefix), 'orchestrator-threads', (msg) =>
      this.answer(msg.subject, msg.data),
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.sub?.drain();
  }

  answer(subject: string, data: Uint8Array): Promise<AnyThreadsReply> {
    const target = parseThreadsSubject(this.runtime.subjects.prefix, subject);
    if (!target) return Promise.resolve(threadsInvalid(`not a threads subject: ${subject}`));
    return this.api.answer(target.tenant, target.op, data);
  }
}
