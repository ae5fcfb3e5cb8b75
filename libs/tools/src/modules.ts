import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineTool, toolSpec, type AnyTool } from './tool';

/**
 * A tool module that cannot be used: it did not load, exports no tool, has a bad definition, or
 * defines a name another module (or a built-in tool) already has. Names the module and the tool;
 * a service stops on it (its configuration must change), it is never retried.
 */
export class ToolModuleError extends Error {
  readonly code = 'tool.module_invalid';
  constructor(
    readonly module: string,
    readonly tool: string | undefined,
    readonly problem: string,
  ) {
    super(`tool module ${module}${tool ? `: tool ${tool}` : ''}: ${problem}`);
    this.name = 'ToolModuleError';
  }
}

/** `TOOL_MODULES`: comma-separated paths (relative to the working directory) or package names. */
export function parseToolModuleList(spec: string | undefined): string[] {
  return (spec ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Loads tool modules in order. Every export that is a tool (an object with `name` and `execute`) or a
 * list of tools counts; each is checked by `defineTool`'s rules and must describe its input as JSON
 * Schema. `taken`: names already in use (e.g. the built-in tools), by where they come from.
 */
export async function loadToolModules(
  specs: readonly string[],
  options: { baseDir?: string; taken?: ReadonlyMap<string, string> } = {},
): Promise<AnyTool[]> {
  const baseDir = options.baseDir ?? process.cwd();
  const owners = new Map(options.taken ?? []);
  const loaded: AnyTool[] = [];
  for (const spec of specs) {
    const exports = await importModule(spec, baseDir);
    const candidates = toolExports(exports);
    if (candidates.length === 0) throw new ToolModuleError(spec, undefined, 'exports no tool (defineTool(...))');
    for (const candidate of candidates) {
      const tool = checkTool(spec, candidate);
      const owner = owners.get(tool.name);
      if (owner) throw new ToolModuleError(spec, tool.name, `the name is already taken by ${owner}`);
      owners.set(tool.name, `tool module ${spec}`);
      loaded.push(tool);
    }
  }
  return loaded;
}

async function importModule(spec: string, baseDir: string): Promise<Record<string, unknown>> {
  const local = spec.startsWith('.') || path.isAbsolute(spec);
  let resolved: string;
  try {
    const resolver = createRequire(path.join(baseDir, 'noop.js'));
    resolved = resolver.resolve(local ? path.resolve(baseDir, spec) : spec);
  } catch (error) {
    throw new ToolModuleError(
      spec,
      undefined,
      `cannot be found from ${baseDir} (${(error as Error).message.split('\n')[0]})`,
    );
  }
  try {
    try {
      // A module named by configuration, resolved at run time: a static import cannot name it.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return require(resolved) as Record<string, unknown>;
    } catch (error) {
      // An ES module: loaded with import() (not available inside jest workers, where CommonJS is used).
      if ((error as { code?: string }).code !== 'ERR_REQUIRE_ESM') throw error;
      return (await import(pathToFileURL(resolved).href)) as Record<string, unknown>;
    }
  } catch (error) {
    if (error instanceof ToolModuleError) throw error;
    throw new ToolModuleError(spec, undefined, `failed to load: ${(error as Error).message ?? String(error)}`);
  }
}

function looksLikeTool(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { execute?: unknown }).execute === 'function';
}

function toolExports(exports: Record<string, unknown>): unknown[] {
  const out = new Set<unknown>();
  const visit = (value: unknown) => {
    if (looksLikeTool(value)) out.add(value);
    else if (Array.isArray(value)) value.forEach((v) => looksLikeTool(v) && out.add(v));
  };
  for (const value of Object.values(exports)) visit(value);
  const fallback = (exports as { default?: unknown }).default;
  if (fallback && typeof fallback === 'object' && !looksLikeTool(fallback) && !Array.isArray(fallback))
    Object.values(fallback).forEach(visit);
  return [...out];
}

function checkTool(spec: string, candidate: unknown): AnyTool {
  const raw = candidate as Record<string, unknown>;
  const name = typeof raw['name'] === 'string' ? raw['name'] : undefined;
  const fail = (problem: string): never => {
    throw new ToolModuleError(spec, name ?? '(unnamed)', problem);
  };
  if (!name) fail('has no name');
  if (typeof raw['description'] !== 'string' || raw['description'].trim() === '')
    fail('needs a description (the model reads it)');
  if (raw['kind'] !== 'pure' && raw['kind'] !== 'idempotent' && raw['kind'] !== 'at-most-once')
    fail(`kind must be pure, idempotent or at-most-once (got ${JSON.stringify(raw['kind'])})`);
  const input = raw['input'] as { safeParse?: unknown } | undefined;
  if (typeof input?.safeParse !== 'function') fail('input must be a zod schema (z.object({...}))');
  let tool: AnyTool;
  try {
    tool = { ...defineTool(raw as unknown as AnyTool), source: `module:${spec}` };
  } catch (error) {
    return fail((error as Error).message.replace(`tool ${name}: `, ''));
  }
  try {
    toolSpec(tool);
  } catch (error) {
    fail(`its input cannot be described as JSON Schema for the model: ${(error as Error).message}`);
  }
  return tool;
}
