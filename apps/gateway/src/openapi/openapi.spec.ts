import { readFileSync } from 'node:fs';
import { OPENAPI_FILE } from './generate';
import { buildOpenApiDocumentOffline, renderOpenApi } from './openapi';

describe('docs/openapi.json', () => {
  it('is what the controllers describe (regenerate: node scripts/run-ts.mjs apps/gateway/src/openapi/generate.ts)', async () => {
    const expected = renderOpenApi(await buildOpenApiDocumentOffline());
    const actual = readFileSync(OPENAPI_FILE, 'utf8');
    expect(actual).toBe(expected);
  });

  it('documents every route with its security, and every schema it references', async () => {
    const doc = await buildOpenApiDocumentOffline();
    const text = JSON.stringify(doc);
    for (const [, id] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      expect(doc.components?.schemas).toHaveProperty([id!]);
    }
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, { security?: unknown[] }>)) {
        // A waitpoint's signed callback URL carries its own credential (the token in its path).
        const open = path.startsWith('/health/') || path === '/metrics' || path.startsWith('/v1/waitpoints/callback/');
        expect([`${method} ${path}`, (op.security ?? []).length > 0]).toEqual([`${method} ${path}`, !open]);
      }
    }
  });
});
