import path from 'node:path';
import { loadToolModules, parseToolModuleList, ToolModuleError } from './modules';

const dir = path.join(__dirname, '../test/fixtures/modules');
const load = (...names: string[]) =>
  loadToolModules(
    names.map((n) => `./${n}`),
    { baseDir: dir, taken: new Map([['demo.weather', 'the built-in tools']]) },
  );
const failure = async (...names: string[]) => {
  const error = await load(...names).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ToolModuleError);
  return error as ToolModuleError;
};

describe('tool modules', () => {
  it('loads every exported tool, single or in a list, and marks where it came from', async () => {
    const tools = await load('good.tools.ts');
    expect(tools.map((t) => [t.name, t.kind, t.source])).toEqual([
      ['fixture.greet', 'pure', 'module:./good.tools.ts'],
      ['fixture.count', 'idempotent', 'module:./good.tools.ts'],
    ]);
    await expect(tools[0]!.execute({ who: 'ann' }, {} as never)).resolves.toEqual({ hello: 'ann' });
  });

  it('names the module and the tool of a name clash', async () => {
    const error = await failure('good.tools.ts', 'clash.tools.ts');
    expect(error.message).toBe(
      'tool module ./clash.tools.ts: tool fixture.greet: the name is already taken by tool module ./good.tools.ts',
    );
  });

  it('names a bad definition, an input JSON Schema cannot describe, a module that throws, and one with no tool', async () => {
    expect((await failure('bad-kind.tools.ts')).message).toBe(
      'tool module ./bad-kind.tools.ts: tool fixture.risky: kind must be pure, idempotent or at-most-once (got "sometimes")',
    );
    expect((await failure('no-schema.tools.ts')).message).toMatch(
      /^tool module \.\/no-schema\.tools\.ts: tool fixture\.when: its input cannot be described as JSON Schema for the model: /,
    );
    expect((await failure('throws.tools.ts')).message).toBe(
      'tool module ./throws.tools.ts: failed to load: the module needs SHOP_DB_URL',
    );
    expect((await failure('empty.tools.ts')).message).toBe(
      'tool module ./empty.tools.ts: exports no tool (defineTool(...))',
    );
    expect((await failure('missing.tools.ts')).message).toMatch(
      /^tool module \.\/missing\.tools\.ts: cannot be found from /,
    );
  });

  it('parses TOOL_MODULES as a comma-separated list', () => {
    expect(parseToolModuleList(' ./a.js, @acme/tools ,,')).toEqual(['./a.js', '@acme/tools']);
    expect(parseToolModuleList(undefined)).toEqual([]);
  });
});
