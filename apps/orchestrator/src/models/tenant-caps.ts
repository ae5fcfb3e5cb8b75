import type { Counter } from '@opentelemetry/api';
import type { CapReservation, TenantCapCounters, TenantCapsRepository } from '@ratchet/adapters';
import type { AgentDefinition, ChatMessage, ModelCallCommand, ToolSpec } from '@ratchet/contracts';
import {
  capRefusalCode,
  capRefusalMessage,
  capReservation,
  capReservationCost,
  costMicros,
  hasCaps,
  priceOf,
  type ModelOutcome,
  type ModelPrice,
  type PriceTable,
  type TenantCaps,
} from '@ratchet/domain';
import { meter, type Logger } from '@ratchet/platform';

/** A call may go under its tenant's caps: made with `agent` (its answer bounded), then settled with its outcome. */
export interface CapAdmitted {
  go: true;
  /** The agent to call with: the same, or with `max_completion_tokens` set to what was reserved for the answer. */
  agent: AgentDefinition;
  settle(outcome: ModelOutcome): Promise<void>;
}

/** A call its tenant's cap refused: it is not made; the run stops over the tenant's budget (by `code`). */
export interface CapRefused {
  go: false;
  code: string;
  message: string;
}

export interface TenantCapsOptions {
  /** How long a tenant's caps are kept in memory before they are read again, ms. */
  cacheMs: number;
  /** The answer reserved (and asked for as `max_completion_tokens`) when the agent bounds none. */
  defaultMaxOutputTokens: number;
  /** Prices per model, for cost caps (a model without one is refused while its tenant has a cost cap). */
  prices?: PriceTable;
  now?: () => number;
}

/** Failures after which the provider may have generated (and billed) an answer: the reservation stays counted. */
const MAYBE_BILLED = new Set(['timeout', 'network', 'aborted', 'malformed_response']);

/**
 * Tenants' token and cost caps (docs/flow-control.md "Token and cost caps"), asked just before each model call: a call of a
 * capped tenant reserves the most it can use — its prompt at a token per byte and its answer at its
 * `max_tokens` (the agent's, or `defaultMaxOutputTokens` asked of the provider) — and goes only if every
 * cap has room; after it, its count becomes what the provider reported (0 when the provider refused it;
 * kept when it may have answered unseen). A tenant's caps are read at most every `cacheMs`.
 */
export class TenantCapsGate {
  private readonly cache = new Map<string, { caps: TenantCaps | undefined; until: number }>();
  private readonly now: () => number;
  private readonly instruments: { refused: Counter; reserved: Counter };

  constructor(
    private readonly caps: TenantCapsRepository,
    private readonly counters: TenantCapCounters,
    private readonly options: TenantCapsOptions,
    private readonly logger: Logger,
  ) {
    this.now = options.now ?? (() => Date.now());
    const m = meter();
    this.instruments = {
      refused: m.createCounter('ratchet.tenant.cap.refused', {
        description: "Model calls a tenant's token cap refused, by cap",
      }),
      reserved: m.createCounter('ratchet.tenant.cap.reserved', {
        description: "Tokens reserved under tenants' token caps",
      }),
    };
  }

  async ask(
    command: ModelCallCommand,
    agent: AgentDefinition,
    request: { messages: readonly ChatMessage[]; tools: readonly ToolSpec[] },
  ): Promise<CapAdmitted | CapRefused> {
    const caps = await this.capsOf(command.tenantId);
    if (!hasCaps(caps)) return { go: true, agent, settle: () => Promise.resolve() };
    const { maxOutput, agent: bounded } = boundedAnswer(agent, this.options.defaultMaxOutputTokens);
    const bytes = promptBytes(request.messages, request.tools);
    const price = priceOf(this.options.prices ?? {}, agent.model.name);
    const needs = {
      tokens: capReservation(bytes, maxOutput),
      cost: price && capReservationCost(price, bytes, maxOutput),
    };
    const answer = await this.counters.reserve(command.tenantId, caps, needs);
    if (!('reservation' in answer)) {
      this.instruments.refused.add(1, { cap: answer.decision.cap });
      return {
        go: false,
        code: capRefusalCode(answer.decision.cap),
        message: capRefusalMessage(answer.decision, agent.model.name),
      };
    }
    this.instruments.reserved.add(needs.tokens);
    const { reservation } = answer;
    return { go: true, agent: bounded, settle: (outcome) => this.settle(reservation, outcome, price) };
  }

  private async settle(
    reservation: CapReservation,
    outcome: ModelOutcome,
    price: ModelPrice | undefined,
  ): Promise<void> {
    let used: { tokens: number; cost: number };
    if (outcome.status === 'ok') {
      const { usage } = outcome;
      const cost = usage.costMicros ?? (price ? costMicros(price, usage) : 0);
      used = { tokens: usage.inputTokens + usage.outputTokens, cost };
    } else if (MAYBE_BILLED.has(outcome.error.code)) return;
    else used = { tokens: 0, cost: 0 };
    // Not settled (the database away): the reservation stays counted, which never lets a cap be passed.
    await this.counters.settle(reservation, used).catch((error: unknown) => {
      this.logger.warn({ err: error, tenantId: reservation.tenantId }, 'settling a token cap reservation failed');
    });
  }

  private async capsOf(tenantId: string): Promise<TenantCaps | undefined> {
    const now = this.now();
    const cached = this.cache.get(tenantId);
    if (cached && cached.until > now) return cached.caps;
    const caps = await this.caps.of(tenantId);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(tenantId, { caps, until: now + this.options.cacheMs });
    return caps;
  }
}

/**
 * The most the agent's answer may be, and the agent to call so the provider holds to it: its own
 * `max_completion_tokens` / `max_tokens`, or else the default, asked as `max_completion_tokens`.
 */
export function boundedAnswer(
  agent: AgentDefinition,
  defaultMax: number,
): { maxOutput: number; agent: AgentDefinition } {
  if (agent.model.provider !== 'openai') return { maxOutput: defaultMax, agent };
  const p = agent.model.parameters;
  const own = p['max_completion_tokens'] ?? p['max_tokens'];
  if (typeof own === 'number' && own > 0) return { maxOutput: own, agent };
  return {
    maxOutput: defaultMax,
    agent: { ...agent, model: { ...agent.model, parameters: { ...p, max_completion_tokens: defaultMax } } },
  };
}

function promptBytes(messages: readonly ChatMessage[], tools: readonly ToolSpec[]): number {
  let bytes = 0;
  for (const m of messages) bytes += Buffer.byteLength(JSON.stringify(m));
  for (const t of tools) bytes += Buffer.byteLength(JSON.stringify(t));
  return bytes;
}
