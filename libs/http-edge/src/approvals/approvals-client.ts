import { ApprovalsReply, approvalsSubjects, type ApprovalsRequestInput } from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';
import type { NatsConnection } from 'nats';

/** How long an approvals call waits for the approvals service (then 503 + Retry-After). */
const TIMEOUT_MS = 5_000;

/** The approvals service over NATS request/reply (`<prefix>.approvals.api`); it owns the data. */
export class ApprovalsClient {
  private readonly subject: string;

  constructor(
    private readonly nc: NatsConnection,
    subjectPrefix: string,
  ) {
    this.subject = approvalsSubjects(subjectPrefix).api;
  }

  async call(request: ApprovalsRequestInput): Promise<ApprovalsReply> {
    let raw: unknown;
    try {
      const msg = await this.nc.request(this.subject, JSON.stringify(request), { timeout: TIMEOUT_MS });
      raw = JSON.parse(new TextDecoder().decode(msg.data));
    } catch (error) {
      throw new TransientError(`approvals ${request.op}: no answer on ${this.subject}`, 'approvals.unavailable', {
        cause: error,
      });
    }
    return ApprovalsReply.parse(raw);
  }
}
