import { compileValueSchema, type CompiledSchema } from '@ratchet/tools';
import { canonicalJson } from '@ratchet/domain';

/** At most this many compiled schemas are kept; the oldest goes first. */
const MAX_SCHEMAS = 256;

/**
 * Waitpoint result schemas compiled once per schema text (keys in any order are one schema). A waitpoint
 * row carries its tool's schema, and every waitpoint of an agent carries the same one.
 */
export class CompiledSchemas {
  private readonly cache = new Map<string, CompiledSchema>();

  compiled(schema: Record<string, unknown>): CompiledSchema {
    const key = canonicalJson(schema);
    const hit = this.cache.get(key);
    if (hit) return hit;
    const compiled = compileValueSchema(schema);
    if (this.cache.size >= MAX_SCHEMAS) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, compiled);
    return compiled;
  }
}
