import { z } from 'zod';
import { envMillis } from '@ratchet/platform';

/** The API root an agent's `openai` model uses when it names none (as the provider's own default). */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

/**
 * One provider key's limits, as declared in `MODEL_LIMITS`: the key is named by its base URL and the name
 * of the variable holding it (never the secret), so every agent using that key shares the limit.
 */
const ProviderLimitSpec = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, { error: 'expected lower-case letters, digits, ".", "_" or "-"' }),
    baseUrl: z.url({ error: 'expected the API root, e.g. https://api.openai.com/v1' }),
    apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected the name of a variable' }),
    requests: z.number().int().positive().optional(),
    tokens: z.number().int().positive().optional(),
    concurrent: z.number().int().positive().optional(),
    /** The window of `requests` and `tokens`, in seconds (a minute unless the provider counts otherwise). */
    windowSeconds: z.number().positive().max(86_400).default(60),
  })
  .strict()
  .refine((l) => l.requests !== undefined || l.tokens !== undefined || l.concurrent !== undefined, {
    error: 'a limit needs at least one of requests, tokens, concurrent',
  });
export type ProviderLimitSpec = z.output<typeof ProviderLimitSpec>;

const EXPECTED =
  'expected a JSON array of limits, e.g. [{"name":"openai","baseUrl":"https://api.openai.com/v1","apiKeyEnv":"OPENAI_API_KEY","requests":500,"tokens":200000}]';

/** `MODEL_LIMITS`: a JSON array of provider limits; names and keys (base URL + variable) each appear once. */
export function envProviderLimits() {
  return z.string({ error: EXPECTED }).transform((value, ctx) => {
    let raw: unknown;
    try {
      raw = JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: `${EXPECTED} (not JSON)` });
      return z.NEVER;
    }
    const parsed = z.array(ProviderLimitSpec).safeParse(raw);
    if (!parsed.success) {
      const first = parsed.error.issues[0]!;
      ctx.addIssue({ code: 'custom', message: `limit ${first.path.join('.')}: ${first.message}` });
      return z.NEVER;
    }
    const names = new Set<string>();
    const keys = new Set<string>();
    for (const limit of parsed.data) {
      const key = keyOf(limit.baseUrl, limit.apiKeyEnv);
      if (names.has(limit.name) || keys.has(key)) {
        ctx.addIssue({
          code: 'custom',
          message: names.has(limit.name)
            ? `limit name ${limit.name} appears twice`
            : `two limits for one key (${limit.baseUrl} with ${limit.apiKeyEnv})`,
        });
        return z.NEVER;
      }
      names.add(limit.name);
      keys.add(key);
    }
    return parsed.data;
  });
}

/** The key a model's requests are counted under: its API root (no trailing slash) and its key's variable. */
export function keyOf(baseUrl: string, apiKeyEnv: string): string {
  return `${baseUrl.replace(/\/+$/, '')} ${apiKeyEnv}`;
}

export const providerLimitConfigFields = {
  /** Provider limits shared by every orchestrator (docs/flow-control.md); empty: none. */
  MODEL_LIMITS: envProviderLimits().default([]),
  /** Added to each limit's window: how long an admission may take to reach the provider as a request. */
  MODEL_LIMIT_GUARD_MS: envMillis().default(1_000),
  /** How long a call refused by a limit's bound on calls at once waits before it asks again. */
  MODEL_LIMIT_RETRY_MS: envMillis().default(1_000),
};
