/**
 * Writes docs/openapi.json from the gateway's controllers:
 *   node scripts/run-ts.mjs apps/gateway/src/openapi/generate.ts
 * openapi.spec.ts fails while the file is stale.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocumentOffline, renderOpenApi } from './openapi';

export const OPENAPI_FILE = path.resolve(__dirname, '../../../../docs/openapi.json');

if (require.main === module) {
  void buildOpenApiDocumentOffline().then((doc) => {
    writeFileSync(OPENAPI_FILE, renderOpenApi(doc));
    console.log(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)}`);
  });
}
