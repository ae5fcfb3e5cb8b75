import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderContractDocs } from './render-contract-docs';

const root = path.resolve(__dirname, '../..');

describe('generated contract documents', () => {
  it.each(Object.entries(renderContractDocs()))(
    '%s matches the zod schemas (run `npm run docs:generate` if not)',
    (file, expected) => {
      let actual = '';
      try {
        actual = readFileSync(path.join(root, file), 'utf8');
      } catch {
        throw new Error(`${file} is missing: run \`npm run docs:generate\``);
      }
      expect(actual).toBe(expected);
    },
  );
});
