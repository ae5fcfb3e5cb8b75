import { Agent, fetch as undiciFetch } from 'undici';
import {
  newWebhookSecret,
  signatureHeader,
  webhookUrlProblem,
  WEBHOOK_HEADERS,
  WebhookDeliveriesRepository,
  withServiceTx,
  type Database,
  type WebhookDelivery,
} from '@ratchet/adapters';
import { afterAttempt, type AttemptResult, type WebhookRetryPolicy } from '@ratchet/domain';
import type { Logger } from '@ratchet/platform';
import { EgressPolicy, EgressRefusedError, type Resolver } from '@ratchet/tools';
import type { Clock } from '../clock';
import { PeriodicPass } from '../periodic-pass';

export interface WebhookSenderOptions {
  intervalMs: number;
  /** One attempt's deadline; a claimed delivery is not attempted again before it (and a margin) passed. */
  timeoutMs: number;
  retry: WebhookRetryPolicy;
  allowPrivate: boolean;
  batch: number;
  /** DNS resolution of receivers' names (injected in tests); the system resolver by default. */
  resolve?: Resolver;
}

/**
 * Sends recorded webhook deliveries. Each pass claims due ones (`for update skip locked`, the attempt
 * counted and the row leased in that commit), POSTs them signed, and records the result: delivered,
 * retried after a backoff with jitter, or dead after the last attempt. A sender that dies mid-attempt
 * leaves the row to be attempted again once its lease ends: deliveries are at least once, and the
 * receiver dedups by `Ratchet-Webhook-Id`. Redirects are not followed (a redirect could lead anywhere).
 */
export class WebhookSender {
  private readonly loop: PeriodicPass;
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * Where receivers may be: not inside the deployment unless WEBHOOK_ALLOW_PRIVATE. Checked on the address
   * each connection uses (the same egress rules as `http.request`, ADR 0017), so a name that resolves
   * elsewhere the second time it is asked (DNS rebinding) cannot reach an inside address.
   */
  private readonly egress: EgressPolicy | undefined;
  private readonly dispatcher: Agent;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: WebhookSenderOptions,
    private readonly random: () => number = Math.random,
  ) {
    this.egress = options.allowPrivate
      ? undefined
      : new EgressPolicy(options.resolve ? { resolve: options.resolve } : {});
    this.dispatcher = new Agent(this.egress ? { connect: { lookup: this.egress.lookup } } : {});
    this.loop = new PeriodicPass(
      options.intervalMs,
      () => this.pass(),
      (error) => this.logger.warn({ err: error }, 'webhook pass failed; the next pass retries'),
    );
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.allSettled([...this.inFlight]);
    await this.dispatcher.close();
  }

  /** Claims what is due and starts the attempts (not waiting for them); resolves with how many. */
  async pass(): Promise<number> {
    const room = this.options.batch - this.inFlight.size;
    if (room <= 0) return 0;
    const now = this.clock.now().toISOString();
    const claimed = await withServiceTx(this.db, (tx) =>
      new WebhookDeliveriesRepository(tx).claimDue(now, this.options.timeoutMs + 5_000, room),
    );
    for (const d of claimed) {
      const attempt = this.attempt(d).catch((error: unknown) =>
        this.logger.warn(
          { err: error, deliveryId: d.deliveryId },
          'webhook attempt not recorded; retried after its lease',
        ),
      );
      this.inFlight.add(attempt);
      void attempt.finally(() => this.inFlight.delete(attempt));
    }
    return claimed.length;
  }

  private async attempt(d: WebhookDelivery): Promise<void> {
    const repo = new WebhookDeliveriesRepository(this.db.sql);
    const secrets = await repo.secrets(d.tenantId, newWebhookSecret, this.clock.now().toISOString());
    const result = await this.send(d, secrets.previous ? [secrets.current, secrets.previous] : [secrets.current]);
    const next = afterAttempt(d.attempts, result, this.options.retry, this.clock.now(), this.random());
    await repo.settle(d, next, 'status' in result ? result.status : undefined, this.clock.now().toISOString());
    const log = { tenantId: d.tenantId, deliveryId: d.deliveryId, attempt: d.attempts, status: next.status };
    if (next.status === 'dead') this.logger.warn({ ...log, error: next.error }, 'webhook delivery dead');
    else this.logger.info(log, 'webhook attempt');
  }

  private async send(d: WebhookDelivery, secrets: string[]): Promise<AttemptResult> {
    // The URL was checked when it was named; checked again here (rules may have changed since), then
    // every address connected to is checked by the dispatcher's lookup.
    const refused = webhookUrlProblem(d.url, { allowPrivate: this.options.allowPrivate });
    if (refused) return { kind: 'refused', error: refused };
    try {
      this.egress?.checkLiteral(new URL(d.url).hostname);
    } catch (error) {
      if (error instanceof EgressRefusedError) return { kind: 'refused', error: error.message };
      throw error;
    }
    const body = JSON.stringify(d.body);
    const timestamp = Math.floor(this.clock.now().getTime() / 1000);
    try {
      const res = await undiciFetch(d.url, {
        dispatcher: this.dispatcher,
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'ratchet-webhooks/1',
          [WEBHOOK_HEADERS.id]: d.deliveryId,
          [WEBHOOK_HEADERS.timestamp]: String(timestamp),
          [WEBHOOK_HEADERS.signature]: signatureHeader(secrets, timestamp, body),
          [WEBHOOK_HEADERS.attempt]: String(d.attempts),
        },
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      await res.body?.cancel().catch(() => undefined);
      return res.status >= 200 && res.status < 300
        ? { kind: 'delivered', status: res.status }
        : { kind: 'failed', error: `HTTP ${res.status}`, status: res.status };
    } catch (error) {
      const inside = egressRefusal(error);
      if (inside) return { kind: 'refused', error: inside.message };
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      return {
        kind: 'failed',
        error: timedOut
          ? `no answer within ${this.options.timeoutMs} ms`
          : `cannot reach ${new URL(d.url).host}: ${error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error)}`,
      };
    }
  }
}

/** The egress refusal behind a failed fetch (undici wraps the connect error), if that is what it was. */
function egressRefusal(error: unknown): EgressRefusedError | undefined {
  for (let e = error, i = 0; e && i < 6; e = (e as { cause?: unknown }).cause, i++)
    if (e instanceof EgressRefusedError) return e;
  return undefined;
}
