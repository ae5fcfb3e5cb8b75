import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiResponse } from '@nestjs/swagger';
import { z } from 'zod';

/*
 * Request bodies and responses are zod schemas (parsed by the controllers, not by class-validator
 * DTOs), so the OpenAPI document gets them from zod: each schema a controller names is registered
 * here and emitted with `z.toJSONSchema` (target OpenAPI 3.0) into `components.schemas` when the
 * document is built (openapi.ts). Bodies are described as clients send them (io: input, defaults
 * optional); responses as the gateway sends them (io: output).
 */

type Meta = { id: string };
export const inputSchemas = z.registry<Meta>();
export const outputSchemas = z.registry<Meta>();

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

function register(registry: z.core.$ZodRegistry<Meta>, id: string, schema: z.ZodType): void {
  const existing = registry.get(schema);
  if (existing && existing.id !== id) throw new Error(`schema registered as ${existing.id} and ${id}`);
  if (!existing) registry.add(schema, { id });
}

/** The JSON body of an operation, as a component schema named `id`. */
export function ApiJsonBody(id: string, schema: z.ZodType, description?: string) {
  register(inputSchemas, id, schema);
  return ApiBody({ schema: ref(id), required: true, ...(description ? { description } : {}) });
}

/** A JSON response of an operation, as a component schema named `id`. */
export function ApiJsonResponse(status: number, description: string, id: string, schema: z.ZodType) {
  register(outputSchemas, id, schema);
  return ApiResponse({ status, description, schema: ref(id) });
}

/** Problem responses an operation may give besides the ones every authenticated route gives. */
export function ApiProblems(problems: Record<number, string>) {
  return applyDecorators(
    ...Object.entries(problems).map(([status, description]) =>
      ApiResponse({
        status: Number(status),
        description,
        content: { 'application/problem+json': { schema: ref('ProblemDetails') } },
      }),
    ),
  );
}

/** Both registries as OpenAPI component schemas (inputs win on a name clash: there should be none). */
export function componentSchemas(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [registry, io] of [
    [outputSchemas, 'output'],
    [inputSchemas, 'input'],
  ] as const) {
    const emitted = z.toJSONSchema(registry, {
      target: 'openapi-3.0',
      io,
      unrepresentable: 'any',
      uri: (id) => `#/components/schemas/${id}`,
    }) as { schemas: Record<string, Record<string, unknown>> };
    const { __shared: shared, ...schemas } = emitted.schemas;
    const sharedDefs = ((shared ?? {}) as { definitions?: Record<string, unknown> }).definitions ?? {};
    for (const [name, schema] of Object.entries(sharedDefs)) out[`${io}_${name}`] = rewriteRefs(schema, io);
    for (const [name, schema] of Object.entries(schemas)) {
      const { $id: _id, ...rest } = schema;
      out[name] = rewriteRefs(rest, io);
    }
  }
  return out;
}

/** `#/components/schemas/__shared#/definitions/schema0` → `#/components/schemas/<io>_schema0`. */
function rewriteRefs(value: unknown, io: string): unknown {
  if (Array.isArray(value)) return value.map((v) => rewriteRefs(v, io));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      k === '$ref' && typeof v === 'string'
        ? v.replace(/^#\/components\/schemas\/__shared#\/definitions\/(.+)$/, `#/components/schemas/${io}_$1`)
        : rewriteRefs(v, io);
  }
  return out;
}
