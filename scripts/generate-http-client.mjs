// Writes libs/http-client/src/gateway.schema.ts (the gateway API's paths and components as TypeScript
// types) from docs/openapi.json with openapi-typescript. Part of `npm run docs:generate`;
//   node scripts/generate-http-client.mjs --check
// exits 1 while the file is stale (libs/http-client/src/gateway.schema.spec.ts runs it).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { format } from 'prettier';
import ts from 'typescript';

const root = path.resolve(import.meta.dirname, '..');
const source = path.join(root, 'docs/openapi.json');
const target = path.join(root, 'libs/http-client/src/gateway.schema.ts');

const HEADER = `/**
 * The gateway's HTTP API as types, generated from docs/openapi.json by openapi-typescript.
 * Do not edit: \`npm run docs:generate\` writes it, and a test fails while it is stale.
 */

/** Any JSON value. Named here: as a recursive indexed access on \`components\` TypeScript refuses it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
`;

export async function render() {
  const ast = await openapiTS(JSON.parse(readFileSync(source, 'utf8')), {
    alphabetize: false,
    exportType: false,
    rootTypes: false,
    // A default is what the gateway fills in, so a request may leave the field out.
    defaultNonNullable: false,
    transform(_schema, metadata) {
      if (metadata.path === '#/components/schemas/JsonValue') return ts.factory.createTypeReferenceNode('JsonValue');
      return undefined;
    },
  });
  const options = { ...(await import('prettier').then((p) => p.resolveConfig(target))), filepath: target };
  return format(HEADER + astToString(ast), options);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = await render();
  if (process.argv.includes('--check')) {
    const current = readFileSync(target, 'utf8');
    if (current !== text) {
      console.error(`${path.relative(root, target)} is stale: run \`npm run docs:generate\``);
      process.exit(1);
    }
    console.log(`${path.relative(root, target)} is up to date`);
  } else {
    writeFileSync(target, text);
    console.log(`wrote ${path.relative(root, target)}`);
  }
}
