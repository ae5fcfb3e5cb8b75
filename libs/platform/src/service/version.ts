import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The release, from the repository's package.json (the same in every service of one build). */
export const RATCHET_VERSION: string = (() => {
  try {
    const pkg = JSON.parse(readFileSync(path.resolve(__dirname, '../../../../package.json'), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();
