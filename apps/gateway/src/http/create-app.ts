import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { GatewayModule, type GatewayResources } from '../gateway.module';
import { PinoNestLogger } from '../logging/logger';
import { buildOpenApiDocument } from '../openapi/openapi';
import { storableRequest } from '@ratchet/http-edge';

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
  serveConsole(app, resources);
  return app;
}

/** Where `npm run build` puts the web console: apps/gateway/console/dist (from src/http or dist/http). */
export const CONSOLE_DIR = path.resolve(__dirname, '..', '..', 'console', 'dist');

/**
 * The web console at /console: static files, no credential needed to load them; every API call the
 * page makes carries the signed-in credential and is checked like any other. Same origin only (CSP).
 */
function serveConsole(app: NestExpressApplication, resources: GatewayResources): void {
  if (!existsSync(path.join(CONSOLE_DIR, 'index.html'))) {
    resources.logger.warn({ dir: CONSOLE_DIR }, 'the console is not built (npm run build); /console answers 404');
    return;
  }
  app.useStaticAssets(CONSOLE_DIR, {
    prefix: '/console/',
    index: 'index.html',
    fallthrough: true,
    setHeaders: (res) => {
      res.setHeader(
        'Content-Security-Policy',
        "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
      );
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Cache-Control', 'no-cache');
    },
  });
}
