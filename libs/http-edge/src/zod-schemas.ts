import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiParam, ApiQuery, ApiResponse } from '@nestjs/swagger';
import { Json } from '@ratchet/contracts';
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

/** One field of a parameter object as an OpenAPI schema (as clients send it). */
export function parameterSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return rest;
}

type ParamObject = z.ZodObject<Record<string, z.ZodType>>;

function paramDecorators(where: 'path' | 'query', schema: ParamObject, descriptions: Record<string, string>) {
  return Object.entries(schema.shape).map(([name, field]) => {
    const described = parameterSchema(field);
    const description = descriptions[name] ?? (described['description'] as string | undefined);
    const options = {
      name,
      required: where === 'path' || !field.safeParse(undefined).success,
      schema: described,
      ...(description ? { description } : {}),
    };
    return where === 'path' ? ApiParam(options) : ApiQuery(options);
  });
}

/** The path parameters of an operation, from the zod object the handler parses them with. */
export function ApiPathParams(schema: ParamObject, descriptions: Record<string, string> = {}) {
  return applyDecorators(...paramDecorators('path', schema, descriptions));
}

/** The query parameters of an operation, from the zod object the handler parses them with. */
export function ApiQueryParams(schema: ParamObject, descriptions: Record<string, string> = {}) {
  return applyDecorators(...paramDecorators('query', schema, descriptions));
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
  // Shared by many schemas; a name of its own instead of a generated `schema0`.
  register(inputSchemas, 'JsonValue', Json);
  register(outputSchemas, 'JsonValue', Json);
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
