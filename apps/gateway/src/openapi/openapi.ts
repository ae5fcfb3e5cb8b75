import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { loadConfig } from '@ratchet/platform';
import { gatewayConfigSchema } from '../gateway.config';
import { GatewayModule, type GatewayResources } from '../gateway.module';
import { listRoutes, openApiPath } from './routes';
import { componentSchemas } from '@ratchet/http-edge';

/** The API's own version (the `/v1` of its paths), not the package's. */
export const API_VERSION = '1.0.0';

const DESCRIPTION = `The HTTP API of Ratchet, a durable agent harness. See docs/api.md for authentication, errors and examples.

Every route except the health probes needs a credential: an API key or (when configured) a JWT, as \`Authorization: Bearer <credential>\`, or an API key as \`x-api-key\`. The tenant is the credential's; ids of other tenants answer 404 exactly like ids that do not exist. Every error is RFC 9457 problem details (\`application/problem+json\`).`;

const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status', 'instance'],
  properties: {
    type: { type: 'string', description: 'urn:ratchet:problem:<slug>; branch on this' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string', description: 'The request path' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          detail: { type: 'string' },
          pointer: { type: 'string', description: 'JSON Pointer into the body, as a URI fragment' },
          header: { type: 'string' },
          parameter: { type: 'string' },
          code: { type: 'string', description: "zod's issue code" },
        },
      },
    },
  },
};

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } } },
});

/**
 * The OpenAPI 3 document of an app, built from the app itself: @nestjs/swagger reads the controllers
 * and their decorators; zod schemas become component schemas (zod-schemas.ts); then every route Nest
 * knows (routes.ts) gets its security, required roles (`x-ratchet-roles`) and the problem responses
 * the guard and filter can give. A route missing from the document is an error, not a silent gap.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Ratchet gateway')
    .setDescription(DESCRIPTION)
    .setVersion(API_VERSION)
    .setLicense('Apache-2.0', 'https://www.apache.org/licenses/LICENSE-2.0')
    .addServer('/', 'The gateway that serves this document (`/docs/openapi.json`)')
    .addServer('{scheme}://{host}', 'A gateway by address (`npm start` listens on localhost:8080)', {
      scheme: { default: 'http', enum: ['http', 'https'] },
      host: { default: 'localhost:8080', description: 'Host and port of the gateway' },
    })
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key (rk_…) or a JWT' }, 'bearer')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key' }, 'apiKey')
    .build();
  const doc = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
  });
  doc.components = {
    ...doc.components,
    schemas: { ...(doc.components?.schemas ?? {}), ...componentSchemas(), ProblemDetails: PROBLEM_SCHEMA } as never,
  };

  for (const route of listRoutes(app)) {
    const item = doc.paths[openApiPath(route.path)] as Record<string, Record<string, unknown>> | undefined;
    const op = item?.[route.method.toLowerCase()];
    if (!op) throw new Error(`${route.method} ${route.path} is a route but not in the OpenAPI document`);
    const responses = (op['responses'] ?? {}) as Record<string, unknown>;
    if (route.public) {
      op['security'] = [];
    } else {
      op['security'] = [{ bearer: [] }, { apiKey: [] }];
      op['x-ratchet-roles'] = {
        all: route.roles,
        ...(route.anyRole ? { any: route.anyRole } : {}),
        ...(route.operator ? { operator: true } : {}),
      };
      responses['401'] ??= problem('No credential, or not a valid one');
      // An operator credential is refused everywhere else, and only it is accepted here.
      responses['403'] ??= route.operator
        ? problem('Not a deployment operator credential (a tenant credential, whatever its roles)')
        : problem('An operator credential, which acts for no tenant');
      if (route.roles.length > 0 || route.anyRole) {
        const need = [
          ...(route.roles.length > 0 ? [`all of: ${route.roles.join(', ')}`] : []),
          ...(route.anyRole ? [`one of: ${route.anyRole.join(', ')}`] : []),
        ].join('; ');
        responses['403'] ??= problem(`The credential lacks a role (${need})`);
      }
      responses['429'] ??= problem('Rate limit of this credential exceeded (see Retry-After)');
    }
    responses['400'] ??= problem('Invalid request (every issue listed in `errors`)');
    responses['503'] ??= problem('A backing service is unavailable (see Retry-After)');
    op['responses'] = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
  }
  doc.paths = Object.fromEntries(Object.entries(doc.paths).sort(([a], [b]) => a.localeCompare(b)));
  assertDescribed(doc);
  return doc;
}

/** What a client generator or a validating proxy needs of each operation; a gap is a build error. */
function assertDescribed(doc: OpenAPIObject): void {
  const gaps: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, Record<string, unknown>>)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const p of (op['parameters'] ?? []) as { name: string; schema?: object }[])
        if (!p.schema || Object.keys(p.schema).length === 0) gaps.push(`${at}: parameter ${p.name} has no schema`);
      for (const [status, response] of Object.entries((op['responses'] ?? {}) as Record<string, { content?: object }>))
        if (/^2\d\d$/.test(status) && status !== '204' && !response.content)
          gaps.push(`${at}: response ${status} has no content`);
      if (!op['operationId'] || !op['summary']) gaps.push(`${at}: no operationId or summary`);
    }
  }
  if (gaps.length > 0) throw new Error(`The OpenAPI document is incomplete:\n${gaps.join('\n')}`);
}

/**
 * The document without any connection: Nest's preview mode builds the module graph (controllers,
 * metadata) without instantiating providers. What `docs/openapi.json` is generated from.
 */
export async function buildOpenApiDocumentOffline(): Promise<OpenAPIObject> {
  const config = loadConfig(gatewayConfigSchema, {}, 'gateway');
  // Never used: in preview mode no provider is instantiated.
  const resources = { config, db: {}, nc: {}, logger: {} } as unknown as GatewayResources;
  const app = await NestFactory.create(GatewayModule.forRoot(resources), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}

/** The document as written to docs/openapi.json: stable key order, two-space indent, final newline. */
export function renderOpenApi(doc: OpenAPIObject): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
