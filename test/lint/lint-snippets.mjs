#!/usr/bin/env node
// Lints code snippets as if they were files at the given paths, with the repository's real
// eslint.config.mjs, and prints the messages as JSON. Runs as its own process because ESLint loads a
// flat config with a dynamic import, which jest's module sandbox does not allow.
//   stdin:  [{ "filePath": "libs/domain/src/x.ts", "code": "import ..." }, ...]
//   stdout: [[{ "ruleId": "no-restricted-imports", "message": "...", "fatal": false }, ...], ...]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const cases = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const eslint = new ESLint({
  cwd: root,
  // Snippets are not files on disk, so they cannot join a TypeScript project: lint them without type
  // information (the boundary rules never need it), and without import/no-cycle, which reads the
  // importing file from disk.
  overrideConfig: [
    { files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked },
    { rules: { 'import/no-cycle': 'off' } },
  ],
});

const results = [];
for (const { filePath, code } of cases) {
  const [result] = await eslint.lintText(code, { filePath: path.resolve(root, filePath) });
  results.push((result?.messages ?? []).map(({ ruleId, message, fatal = false }) => ({ ruleId, message, fatal })));
}
process.stdout.write(JSON.stringify(results));
