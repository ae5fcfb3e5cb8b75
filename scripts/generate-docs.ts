/**
 * Writes the generated contract documents: docs/schemas/*.schema.json and docs/asyncapi.yaml.
 * `npm run docs:generate` after changing a zod schema; a test fails while these are stale.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderContractDocs } from '../test/contracts/render-contract-docs';

const root = path.resolve(__dirname, '..');
for (const [file, text] of Object.entries(renderContractDocs())) {
  const full = path.join(root, file);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, text);
  console.log(`wrote ${file}`);
}
