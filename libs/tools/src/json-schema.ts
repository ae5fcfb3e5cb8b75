import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import { z } from 'zod';
import { Json, type JsonObject } from '@ratchet/contracts';

/**
 * Input schemas that a tool's source gives as JSON Schema (remote tool services, MCP servers), compiled
 * with Ajv: draft 2020-12 by default, draft-07 when the schema says so (`$schema`), as MCP servers
 * written with zod 3 do. A schema that does not compile is refused before any tool is offered.
 */
// Formats (`uri`, `email`, ...) are annotations here: the service that owns the tool checks its own.
const options = { allErrors: true, strict: false, validateFormats: false, logger: false } as const;
const draft2020 = new Ajv2020(options);
const draft07 = new Ajv(options);

export type CompiledSchema = { ok: true; validate: ValidateFunction } | { ok: false; problem: string };

export function compileInputSchema(schema: unknown): CompiledSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    return { ok: false, problem: 'the input schema must be a JSON Schema object' };
  const s = schema as Record<string, unknown>;
  if (s['type'] !== undefined && s['type'] !== 'object')
    return {
      ok: false,
      problem: `the input schema must describe an object (its type is ${JSON.stringify(s['type'])})`,
    };
  return compileSchemaObject(s);
}

/**
 * A schema for any JSON value (a waitpoint's result, which need not be an object), compiled as an input
 * schema is. `problemsOf` reads what a value does wrong as `path: message` lines.
 */
export function compileValueSchema(schema: unknown): CompiledSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    return { ok: false, problem: 'the schema must be a JSON Schema object' };
  return compileSchemaObject(schema as Record<string, unknown>);
}

/** What `value` does wrong against a compiled schema (empty: it fits), one `path: message` line each. */
export function problemsOf(validate: ValidateFunction, value: unknown): string[] {
  if (validate(value)) return [];
  return schemaIssues(validate.errors).map(
    (i) => `${i.path.length > 0 ? `/${i.path.join('/')}` : '(the value)'}: ${i.message}`,
  );
}

function compileSchemaObject(s: Record<string, unknown>): CompiledSchema {
  const dialect = typeof s['$schema'] === 'string' ? s['$schema'] : '';
  const ajv = /draft-0[4-7]/.test(dialect) ? draft07 : draft2020;
  try {
    if (!ajv.validateSchema(s)) return { ok: false, problem: `not a valid JSON Schema: ${ajv.errorsText(ajv.errors)}` };
    // Compiled without caching by reference: schemas come and go with the services that describe them.
    return { ok: true, validate: ajv.compile({ ...s }) };
  } catch (error) {
    return { ok: false, problem: `not a valid JSON Schema: ${(error as Error).message}` };
  }
}

/** `path: message` for each problem, as zod's issues read. */
export function schemaIssues(errors: readonly ErrorObject[] | null | undefined): { path: string[]; message: string }[] {
  return (errors ?? []).map((e) => ({
    path: e.instancePath.split('/').filter(Boolean),
    message:
      e.keyword === 'additionalProperties'
        ? `unknown property "${String(e.params['additionalProperty'])}"`
        : (e.message ?? e.keyword),
  }));
}

/**
 * A zod input that accepts exactly what a compiled JSON Schema accepts, so arguments are checked by
 * `runTool` before anything is sent, and invalid ones go back to the model as `invalid_arguments`.
 */
export function jsonSchemaInput(validate: ValidateFunction): z.ZodType<JsonObject> {
  return z.record(z.string(), Json).superRefine((value, ctx) => {
    if (validate(value)) return;
    for (const issue of schemaIssues(validate.errors))
      ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });
}

/** The schema as the model receives it: the source's own, minus the dialect marker. */
export function modelParameters(schema: Record<string, unknown>): JsonObject {
  const { $schema: _dialect, ...rest } = schema;
  return Json.parse(rest) as JsonObject;
}
