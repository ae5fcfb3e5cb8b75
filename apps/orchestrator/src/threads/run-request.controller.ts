import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { RunRequest, tenantOfRequestSubject, type RunOutcome } from '@ratchet/contracts';
import {
  findUnstorable,
  PoisonMessageError,
  redactSecrets,
  runPriorityOf,
  runSlotsOf,
  runThrottleOf,
  runDebounceOf,
  type Clock,
} from '@ratchet/domain';
import { CLOCK, JetStreamContext, ServiceRuntime, runIdFor, threadIdFor } from '@ratchet/platform';
import { AgentCatalog } from '@ratchet/agents';
import { TenantAgentSettingsRepository, TenantSlotLimitsRepository } from '@ratchet/adapters';
import { KeyedSerializer, ThreadCommandHandler } from '@ratchet/engine';
import { requestToCommand, runLimitsOf } from './to-command';

export const REQUESTS_CONSUMER = 'orchestrator-requests';

/**
 * What the deployment allows one tenant: at most `maxActiveRuns` runs in flight (queued, or running and not
 * waiting for a human) and at most `maxWaitingRuns` runs waiting for a human (0: no bound); a request past
 * `maxActiveRuns` is refused, or queued for admission (`overBound: 'queue'`, ADR 0045).
 */
export interface RunAdmission {
  maxActiveRuns: number;
  maxWaitingRuns: number;
  overBound?: 'refuse' | 'queue';
  /** How often the admission pass runs (overBound `queue`); default 500 ms. */
  passMs?: number;
}
export const RUN_ADMISSION = Symbol('RUN_ADMISSION');

/**
 * Run requests from the gateway and from any service publishing on `<prefix>.requests.<tenant>`. The
 * tenant is the subject's (bound by NATS permissions), never the body's. A request that cannot start a
 * run is never dropped silently: the requester is told why on its reply subject and the failure is
 * recorded before the message is termed.
 */
@Controller()
export class RunRequestController {
  constructor(
    @Inject(ThreadCommandHandler) private readonly threads: ThreadCommandHandler,
    @Inject(AgentCatalog) private readonly agents: AgentCatalog,
    @Inject(TenantSlotLimitsRepository) private readonly slotLimits: TenantSlotLimitsRepository,
    @Inject(TenantAgentSettingsRepository) private readonly tenantSettings: TenantAgentSettingsRepository,
    @Inject(ServiceRuntime) private readonly runtime: ServiceRuntime,
    @Inject(KeyedSerializer) private readonly serializer: KeyedSerializer,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RUN_ADMISSION) private readonly admission: RunAdmission,
  ) {}

  @EventPattern(REQUESTS_CONSUMER)
  onRequest(@Payload() data: unknown, @Ctx() ctx: JetStreamContext): Promise<void> {
    // Requests for one thread are decided in the order they arrived (e.g. two `enqueue` requests).
    return this.serializer.run(this.threadKey(ctx.getSubject(), data), () => this.handleRequest(data, ctx));
  }

  private threadKey(subject: string, data: unknown): string {
    const tenant = tenantOfRequestSubject(this.runtime.subjects.prefix, subject) ?? subject;
    const body = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
    if (typeof body['threadId'] === 'string') return `${tenant}/${body['threadId']}`;
    if (typeof body['requestId'] === 'string') return `${tenant}/${threadIdFor(tenant, body['requestId'])}`;
    // Names no thread (it is refused as invalid): in a line of its own, the tenant's malformed requests.
    return `${tenant}/?`;
  }

  private async handleRequest(data: unknown, ctx: JetStreamContext): Promise<void> {
    const tenantId = tenantOfRequestSubject(this.runtime.subjects.prefix, ctx.getSubject());
    if (!tenantId) throw new PoisonMessageError(`not a request subject: ${ctx.getSubject()}`, 'request.subject');
    // Content Postgres cannot store (NUL, a lone surrogate) or absurd nesting would fail on every
    // delivery: refused now, with the field named, instead of holding a consumer slot for minutes.
    const unstorable = findUnstorable(data);
    if (unstorable) {
      const message = `run request cannot be stored: ${unstorable.message}`;
      await this.refuse(tenantId, data, 'request.unstorable', message);
      throw new PoisonMessageError(message, 'request.unstorable');
    }
    const parsed = RunRequest.safeParse(data);
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      await this.refuse(tenantId, data, 'request.invalid', `invalid run request: ${detail}`);
      throw new PoisonMessageError(`invalid run request: ${detail}`, 'request.invalid');
    }
    const request = parsed.data;
    const agent = await this.agents.latest(tenantId, request.agent);
    if (!agent) {
      // Another tenant's agent is unknown here, exactly like a name nobody registered.
      const message = `unknown agent "${request.agent}"`;
      await this.refuse(tenantId, request, 'agent.unknown', message);
      throw new PoisonMessageError(message, 'agent.unknown');
    }
    // The tenant's settings for the agent (an operator's), in place of the agent's own: read together.
    const declared = agent.definition.slots ?? [];
    const [tenantMaxes, settings] = await Promise.all([
      declared.length > 0 ? this.slotLimits.maxes(tenantId, agent.name) : {},
      this.tenantSettings.of(tenantId, agent.name),
    ]);
    // The run's concurrency keys (its agent's slots over the metadata, as the log will keep it: redacted),
    // each with its max: the tenant's setting for the slot when an operator gave it one, else the agent's.
    const metadata = redactSecrets(request.metadata);
    const slots = runSlotsOf(declared, metadata, agent.name, tenantMaxes);
    if ('error' in slots) {
      await this.refuse(tenantId, request, slots.error.code, slots.error.message);
      throw new PoisonMessageError(slots.error.message, slots.error.code);
    }
    // Its throttle (the agent's over the same metadata, or the tenant's own) and debounce: refused when a
    // key's field is missing.
    const throttle = runThrottleOf(agent.definition.throttle, metadata, agent.name, {
      limit: settings.throttleLimit,
      periodSeconds: settings.throttlePeriodSeconds,
    });
    if ('error' in throttle) {
      await this.refuse(tenantId, request, throttle.error.code, throttle.error.message);
      throw new PoisonMessageError(throttle.error.message, throttle.error.code);
    }
    const debounce = runDebounceOf(agent.definition.debounce, metadata, agent.name);
    if ('error' in debounce) {
      await this.refuse(tenantId, request, debounce.error.code, debounce.error.message);
      throw new PoisonMessageError(debounce.error.message, debounce.error.code);
    }
    const priority = runPriorityOf(
      request.priority,
      settings.priority ?? agent.definition.priority,
      request.principal.roles,
      agent.name,
    );
    if ('error' in priority) {
      await this.refuse(tenantId, request, priority.error.code, priority.error.message);
      throw new PoisonMessageError(priority.error.message, priority.error.code);
    }
    const command = requestToCommand(
      tenantId,
      request,
      {
        name: agent.name,
        version: agent.version,
        maxSteps: agent.definition.maxSteps,
        limits: runLimitsOf(agent.definition, settings),
      },
      this.clock.now().toISOString(),
      {
        ...(this.admission.maxActiveRuns > 0
          ? { activeRunLimit: this.admission.maxActiveRuns, overBound: this.admission.overBound ?? 'refuse' }
          : {}),
        ...(this.admission.maxWaitingRuns > 0 ? { waitingRunLimit: this.admission.maxWaitingRuns } : {}),
        ...(slots.slots.length > 0 ? { slots: slots.slots } : {}),
        ...(throttle.throttle ? { throttle: throttle.throttle } : {}),
        ...(debounce.debounce ? { debounce: debounce.debounce } : {}),
        ...(priority.priority !== 0 ? { priority: priority.priority } : {}),
      },
    );
    const traceparent = ctx.getTraceparent();
    // Claimed per stream message, not per request id: a redelivery of this message is decided once, while
    // a request sent again (another message, even with the same request id) is decided too — answered with
    // the run it started, or refused as a conflict when it asks something else; the decider starts no
    // second run either way.
    const messageId = `${tenantId}:${request.requestId}@${ctx.getStreamSeq()}`;
    const outcome = await this.threads.handle(REQUESTS_CONSUMER, messageId, command, {
      correlationId: request.requestId,
      trace: traceparent ? { traceparent, tracestate: ctx.getTracestate() } : undefined,
      delivery: ctx.getDeliveryCount(),
      worker: this.runtime.config.SERVICE_INSTANCE_ID,
    });
    if (outcome.status === 'duplicate') this.runtime.logger.info({ messageId }, 'duplicate message ignored');
  }

  /** Tells the requester (if it gave a reply subject) why its request was refused. */
  private async refuse(tenantId: string, body: unknown, code: string, message: string): Promise<void> {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const requestId = typeof b['requestId'] === 'string' ? b['requestId'] : 'unknown';
    const replyTo = typeof b['replyTo'] === 'string' ? b['replyTo'] : undefined;
    if (!replyTo) return;
    const outcome: RunOutcome = { requestId, tenantId, status: 'rejected', error: { code, message, retryable: false } };
    if (requestId !== 'unknown') outcome.runId = runIdFor(tenantId, requestId);
    this.runtime.nc.publish(replyTo, JSON.stringify(outcome));
    await this.runtime.nc.flush();
  }
}
