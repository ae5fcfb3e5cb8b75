import type { Counter, Histogram } from '@opentelemetry/api';
import type { ModelLimitAdmissions } from '@ratchet/adapters';
import type { AgentDefinition, ChatMessage, ModelCallCommand, ToolSpec } from '@ratchet/contracts';
import { baseModelCommandId, estimateCallTokens, type LimitBound, type ProviderLimit } from '@ratchet/domain';
import { meter, type Logger } from '@ratchet/platform';
import { DEFAULT_OPENAI_BASE_URL, keyOf, type ProviderLimitSpec } from './provider-limits.config';

/** The answer the model may write when the agent does not bound it (`max_tokens`), for the token estimate. */
export const DEFAULT_OUTPUT_ESTIMATE = 1_000;

/** A call may go: settle it when it ended (with the tokens the provider reported, if it did). */
export interface Admitted {
  go: true;
  /** The limit it was admitted under (none: its key has no limit). */
  limit?: string | undefined;
  settle(tokens: number | undefined): Promise<void>;
}

/** A call may not go before `until`: the thread commands it again for then. */
export interface Held {
  go: false;
  limit: string;
  bound: LimitBound;
  until: string;
}

const UNLIMITED: Admitted = { go: true, settle: () => Promise.resolve() };

/**
 * The provider limits of this deployment (`MODEL_LIMITS`), asked before each model call to a limited key
 * and settled after it (docs/flow-control.md). A call's identity under a limit is its model call without
 * the `:wait:<n>` suffix, so a call that waited finds its reservation.
 */
export class ProviderLimits {
  private readonly byKey = new Map<string, ProviderLimit>();
  private readonly instruments: { admitted: Counter; waits: Counter; tokens: Counter; check: Histogram };

  constructor(
    specs: readonly ProviderLimitSpec[],
    private readonly admissions: ModelLimitAdmissions,
    private readonly logger: Logger,
  ) {
    for (const s of specs) {
      this.byKey.set(keyOf(s.baseUrl, s.apiKeyEnv), {
        name: s.name,
        requests: s.requests,
        tokens: s.tokens,
        concurrent: s.concurrent,
        windowMs: Math.round(s.windowSeconds * 1000),
      });
    }
    const m = meter();
    this.instruments = {
      admitted: m.createCounter('ratchet.model.limit.admitted', {
        description: 'Model calls a provider limit let go, by limit',
      }),
      waits: m.createCounter('ratchet.model.limit.waits', {
        description: 'Model calls a provider limit made wait, by limit and bound',
      }),
      tokens: m.createCounter('ratchet.model.limit.tokens', {
        description: 'Tokens of calls under a provider limit as settled (reported, or estimated when none was)',
      }),
      check: m.createHistogram('ratchet.model.limit.check', {
        unit: 'ms',
        description: 'Time to ask a provider limit for a model call',
      }),
    };
  }

  /** The limit the agent's model is counted under, if any. */
  limitOf(agent: AgentDefinition): ProviderLimit | undefined {
    if (this.byKey.size === 0 || agent.model.provider !== 'openai') return undefined;
    return this.byKey.get(keyOf(agent.model.baseUrl ?? DEFAULT_OPENAI_BASE_URL, agent.model.apiKeyEnv));
  }

  /** Asks the agent's limit (if it has one) for this call, just before the request would be sent. */
  async ask(
    command: ModelCallCommand,
    agent: AgentDefinition,
    request: { messages: readonly ChatMessage[]; tools: readonly ToolSpec[] },
  ): Promise<Admitted | Held> {
    const limit = this.limitOf(agent);
    if (!limit) return UNLIMITED;
    const estimate = estimateCallTokens(promptChars(request.messages, request.tools), maxOutputOf(agent));
    // One identity for the attempt, whatever command or delivery carries it: a call that waited finds its
    // reservation; one asked again after it went (its worker died in it) is admitted anew by the store.
    const callId = baseModelCommandId(command.commandId);
    const started = performance.now();
    // The calls of a limit that ask at once in this process are decided together, in one transaction.
    const { decision, admissionId } = await this.admissions.acquire(limit, {
      callId,
      tenantId: command.tenantId,
      estimate,
      // A call ends by its step budget; past it (and a minute's slack) a call whose worker died no longer counts.
      maxDurationMs: agent.stepTimeoutSeconds * 1000 + 60_000,
    });
    this.instruments.check.record(performance.now() - started, { limit: limit.name });
    if (!decision.go) {
      this.instruments.waits.add(1, { limit: limit.name, bound: decision.by });
      // Rounded up to the millisecond the log keeps: a call must not come back before its turn.
      const until = new Date(Math.ceil(decision.at)).toISOString();
      return { go: false, limit: limit.name, bound: decision.by, until };
    }
    this.instruments.admitted.add(1, { limit: limit.name });
    return {
      go: true,
      limit: limit.name,
      settle: async (tokens) => {
        this.instruments.tokens.add(tokens ?? estimate, { limit: limit.name });
        // Not settled (the database away): the call counts as in flight until its expiry, with its estimate.
        await this.admissions.settle(limit.name, admissionId, tokens).catch((error: unknown) => {
          this.logger.warn({ err: error, limit: limit.name, callId: admissionId }, 'settling a provider limit failed');
        });
      },
    };
  }
}

function promptChars(messages: readonly ChatMessage[], tools: readonly ToolSpec[]): number {
  let chars = 0;
  for (const m of messages) chars += JSON.stringify(m).length;
  for (const t of tools) chars += JSON.stringify(t).length;
  return chars;
}

function maxOutputOf(agent: AgentDefinition): number {
  if (agent.model.provider !== 'openai') return DEFAULT_OUTPUT_ESTIMATE;
  const p = agent.model.parameters;
  const asked = p['max_completion_tokens'] ?? p['max_tokens'];
  return typeof asked === 'number' && asked > 0 ? asked : DEFAULT_OUTPUT_ESTIMATE;
}
