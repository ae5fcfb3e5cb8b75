import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import { GatewayModule, type GatewayResources } from '../gateway.module';
import { PinoNestLogger } from '../logging/logger';
import { buildOpenApiDocument } from '../openapi/openapi';
import { storableRequest } from './storable-request';

/**
 * Builds the HTTP app around already-open resources, without listening. main.ts and the integration
 * test both use it, so the test exercises the same body limit, filter and guard as production.
 */
export async function createGatewayApp(resources: GatewayResources): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(GatewayModule.forRoot(resources), {
    // Our own JSON parser below, with the size limit; no urlencoded parser: the API speaks JSON only.
    bodyParser: false,
    logger: new PinoNestLogger(resources.logger),
    // Throw instead of process.abort() when a provider fails to build, so main.ts can report it.
    abortOnError: false,
  });
  // Oversized bodies are refused while streaming in (413, via the problem filter), never buffered whole.
  app.useBodyParser('json', { limit: resources.config.GATEWAY_BODY_LIMIT_BYTES });
  // After the parser, before any route: what Postgres cannot store is refused here, with the field named.
  app.use(storableRequest);
  app.disable('x-powered-by');
  // The source address failed authentications are counted by: the client's, not the balancer's.
  const trust = resources.config.GATEWAY_TRUST_PROXY;
  if (trust !== undefined) app.set('trust proxy', /^\d+$/.test(trust) ? Number(trust) : trust);
  // The API reference, unauthenticated: Swagger UI at /docs, the document at /docs/openapi.json.
  SwaggerModule.setup('docs', app, buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
  });
  return app;
}
