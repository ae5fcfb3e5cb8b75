import { Inject, Injectable } from '@nestjs/common';
import type { Msg } from 'nats';
import { parseThreadsSubject, threadsSubjectPattern } from '@ratchet/contracts';
import { RequestResponder, ServiceRuntime } from '@ratchet/platform';
import { ThreadsApi, threadsInvalid, type AnyThreadsReply } from '@ratchet/requests';
import { RUN_ADMISSION, type RunAdmission } from '../threads/run-request.controller';

/**
 * Threads, runs and events over NATS request/reply on `<prefix>.threads.<tenant>.<op>` (see `ThreadsApi`;
 * the gateway's read API relays here). The tenant is the subject's, bound by NATS permissions.
 */
@Injectable()
export class ThreadsQueryResponder extends RequestResponder {
  private readonly api: ThreadsApi;

  constructor(@Inject(ServiceRuntime) runtime: ServiceRuntime, @Inject(RUN_ADMISSION) admission: RunAdmission) {
    super(runtime, 'orchestrator-threads');
    this.api = new ThreadsApi(runtime, admission);
  }

  protected subject(): string {
    return threadsSubjectPattern(this.runtime.subjects.prefix);
  }

  protected reply(msg: Msg): Promise<AnyThreadsReply> {
    return this.answer(msg.subject, msg.data);
  }

  answer(subject: string, data: Uint8Array): Promise<AnyThreadsReply> {
    const target = parseThreadsSubject(this.runtime.subjects.prefix, subject);
    if (!target) return Promise.resolve(threadsInvalid(`not a threads subject: ${subject}`));
    return this.api.answer(target.tenant, target.op, data);
  }
}
