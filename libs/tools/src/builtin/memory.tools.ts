import { z } from 'zod';
import { Json, MemoryNamespace, MemoryNamespacePrefix } from '@ratchet/contracts';
import { defineTool, ToolError, type ToolContext } from '../tool';

function memoryOf(ctx: ToolContext) {
  if (!ctx.memory) throw new ToolError('memory.not_configured', 'this tool executor has no memory service wired');
  return ctx.memory;
}

function refused(error: { code: string; message: string }): never {
  throw new ToolError(`memory.${error.code}`, error.message, error.code === 'unavailable');
}

/**
 * Saves a fact to durable memory as the run's principal, in the run's tenant (both from the call, never
 * from the arguments). Last writer wins, so saving the same value again is harmless: `idempotent`.
 */
export const memorySave = defineTool({
  name: 'memory.save',
  description: 'Remember a fact across conversations: stores a JSON value under a namespace and key.',
  kind: 'idempotent',
  timeoutMs: 10_000,
  input: z.object({
    namespace: MemoryNamespace,
    key: z.string().min(1).max(256),
    value: Json.describe('Any JSON value'),
    text: z.string().max(16_384).optional().describe('What search should match; derived from the value if omitted'),
  }),
  async execute(args, ctx) {
    const reply = await memoryOf(ctx).put({
      namespace: args.namespace,
      key: args.key,
      value: args.value,
      ...(args.text !== undefined ? { text: args.text } : {}),
      provenance: { threadId: ctx.threadId, runId: ctx.runId },
    });
    if (!reply.ok) refused(reply.error);
    return { saved: true, namespace: reply.item.namespace, key: reply.item.key, version: reply.item.version };
  },
});

/** Full-text search of durable memory, as the run's principal in the run's tenant. Reads only: `pure`. */
export const memorySearch = defineTool({
  name: 'memory.search',
  description: 'Search remembered facts by words (web-search syntax: words, "phrases", -excluded, or).',
  kind: 'pure',
  timeoutMs: 10_000,
  input: z.object({
    query: z.string().min(1).max(1000),
    namespacePrefix: MemoryNamespacePrefix.default(''),
    limit: z.number().int().min(1).max(20).default(5),
  }),
  async execute(args, ctx) {
    const reply = await memoryOf(ctx).search({
      query: args.query,
      namespacePrefix: args.namespacePrefix,
      limit: args.limit,
    });
    if (!reply.ok) refused(reply.error);
    return {
      hits: reply.hits.map((h) => ({
        namespace: h.item.namespace,
        key: h.item.key,
        value: h.item.value,
        score: h.score,
      })),
    };
  },
});
