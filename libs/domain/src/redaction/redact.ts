/**
 * Data minimisation before anything is persisted or exported: values that look like secrets, and
 * fields whose name says they hold one, are replaced. Pure, so every edge applies the same rule.
 */
export const REDACTED = '[redacted]';

const SECRET_KEY = /(pass(word|phrase)?|secret|token|api[-_]?key|authorization|credential|private[-_]?key|cookie)$/i;

/** Shapes of credentials seen in the wild; deliberately specific, so ordinary text survives. */
const SECRET_VALUE: RegExp[] = [
  /\bsk-(live|test|proj|ant)?-?[A-Za-z0-9_-]{16,}\b/g, // OpenAI/Anthropic/Stripe-style keys
  /\b(rk|pk|sk)_(live|test)_[A-Za-z0-9]{16,}\b/g, // Stripe
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g, // GitHub tokens
  /\bxox[abpr]-[A-Za-z0-9-]{10,}\b/g, // Slack tokens
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key ids
  /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b/g, // JWTs
  /\bBearer\s+[A-Za-z0-9._~+/-]{16,}=*/gi, // bearer credentials
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];

/** A secret written out in prose: `password: hunter2`, `api key = abc…` — the value goes, the words stay. */
const SECRET_PHRASE =
  /\b(pass(?:word|phrase)?|passwd|pwd|secret|api[-_ ]?key|access[-_ ]?token)(\s*(?:is\s*)?[:=]\s*)("[^"]*"|'[^']*'|\S+)/gi;

/** The deployment's own patterns (`RATCHET_REDACT_PATTERNS`), installed once at boot. */
let operatorPatterns: readonly RegExp[] = [];

/**
 * Adds the deployment's patterns to the built-in ones, for every redaction in this process from now on.
 * Called once at boot with the parsed configuration; each pattern is used globally (`g`).
 */
export function configureRedaction(patterns: readonly RegExp[]): void {
  operatorPatterns = patterns.map((p) => (p.global ? p : new RegExp(p.source, `${p.flags}g`)));
}

export function redactText(text: string): string {
  let out = text;
  for (const pattern of SECRET_VALUE) out = out.replace(pattern, REDACTED);
  out = out.replace(SECRET_PHRASE, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`);
  for (const pattern of operatorPatterns) out = out.replace(pattern, REDACTED);
  return out;
}

/**
 * A copy of `value` with secret-looking strings and secret-named fields redacted, plus any field
 * named in `sensitive` (a tool's own list) wherever it appears.
 */
export function redactSecrets<T>(value: T, sensitive: readonly string[] = []): T {
  const extra = new Set(sensitive.map((s) => s.toLowerCase()));
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactText(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, inner] of Object.entries(v as Record<string, unknown>)) {
        out[k] =
          (SECRET_KEY.test(k) || extra.has(k.toLowerCase())) && inner !== null && typeof inner !== 'object'
            ? REDACTED
            : walk(inner);
      }
      return out;
    }
    return v;
  };
  return walk(value) as T;
}
