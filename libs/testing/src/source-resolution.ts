import Module from 'node:module';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

type Resolver = (request: string, ...rest: unknown[]) => string;

/**
 * jest runs globalSetup outside its module registry: `moduleNameMapper` does not apply there and Node
 * would resolve `@ratchet/*` to the (unbuilt) dist/. Maps them to the TypeScript sources, which jest's
 * transform hook compiles while the setup runs. Returns the function that undoes the mapping.
 */
export function resolveWorkspaceSources(): () => void {
  const loader = Module as unknown as { _resolveFilename: Resolver };
  const original = loader._resolveFilename;
  const libs = resolve(__dirname, '..', '..');
  loader._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
    const lib = /^@ratchet\/([a-z-]+)$/.exec(request)?.[1];
    const source = lib ? join(libs, lib, 'src', 'index.ts') : undefined;
    if (source && existsSync(source)) return source;
    return original.call(this, request, ...rest);
  };
  return () => {
    loader._resolveFilename = original;
  };
}
