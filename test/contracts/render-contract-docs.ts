import { stringify } from 'yaml';
import { asyncApiDocument, jsonSchemaOf, PUBLIC_MESSAGES } from '@ratchet/contracts';
import pkg from '../../package.json';

/** The generated contract documents, by path from the repository root. */
export function renderContractDocs(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [name, schema] of Object.entries(PUBLIC_MESSAGES)) {
    files[`docs/schemas/${name}.schema.json`] = `${JSON.stringify(jsonSchemaOf(name, schema), null, 2)}\n`;
  }
  files['docs/asyncapi.yaml'] =
    `# Generated from libs/contracts by \`npm run docs:generate\`; do not edit.\n${stringify(asyncApiDocument(pkg.version))}`;
  return files;
}
