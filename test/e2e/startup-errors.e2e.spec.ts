import { freePort, runProcess, sourceCommand } from '@ratchet/testing';

/** A service started with a bad environment must say exactly what is wrong, and stop. */
describe('start-up errors name the problem', () => {
  const orchestrator = sourceCommand('apps/orchestrator/src/main.ts');
  const run = async (env: Record<string, string>) =>
    runProcess(orchestrator.command, orchestrator.args, {
      ...orchestrator.env,
      LOG_LEVEL: 'error',
      HEALTH_PORT: String(await freePort()),
      ...env,
    });

  it('exits 78 naming every malformed variable and what was expected', async () => {
    const result = await run({
      DATABASE_URL: 'mysql://db/ratchet',
      NATS_URL: 'not a url',
      RATCHET_SUBJECT_PREFIX: 'has.dots',
    });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('orchestrator');
    expect(result.stderr).toMatch(/DATABASE_URL: expected a postgres:\/\/ URL/);
    expect(result.stderr).toMatch(/NATS_URL: expected a nats:\/\/ URL/);
    expect(result.stderr).toMatch(/RATCHET_SUBJECT_PREFIX/);
  });

  it('names the Postgres URL it tried (without the password) and how to start one', async () => {
    const result = await run({ DATABASE_URL: 'postgres://ratchet:s3cret@127.0.0.1:1/ratchet' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('127.0.0.1:1');
    expect(result.stderr).not.toContain('s3cret');
    expect(result.stderr).toContain('docker compose up -d nats postgres');
  });

  it('names the NATS URL it tried and how to start one', async () => {
    const result = await run({ DATABASE_URL: process.env['DATABASE_URL'] ?? '', NATS_URL: 'nats://127.0.0.1:1' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('nats://127.0.0.1:1');
    expect(result.stderr).toContain('docker compose up -d nats postgres');
  });

  it('a tool module that cannot be used stops the executor and the orchestrator (78), naming the module and the tool', async () => {
    const executor = sourceCommand('apps/tool-executor/src/main.ts');
    const env = {
      LOG_LEVEL: 'error',
      HEALTH_PORT: String(await freePort()),
      TOOL_MODULES: './examples/tool-module/shop.tools.ts,./libs/tools/test/fixtures/modules/bad-kind.tools.ts',
    };
    const result = await runProcess(executor.command, executor.args, { ...executor.env, ...env });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain(
      'TOOL_MODULES: tool module ./libs/tools/test/fixtures/modules/bad-kind.tools.ts: tool fixture.risky: kind must be pure, idempotent or at-most-once',
    );
    // A name clash with a built-in tool, in the orchestrator (which loads modules for local tools).
    const clash = await run({ TOOL_MODULES: './libs/tools/test/fixtures/modules/builtin-clash.tools.ts' });
    expect(clash.code).toBe(78);
    expect(clash.stderr).toContain(
      'tool module ./libs/tools/test/fixtures/modules/builtin-clash.tools.ts: tool demo.weather: the name is already taken by the built-in tools',
    );
  });

  it('a malformed MCP_SERVERS names the entry and the field', async () => {
    const executor = sourceCommand('apps/tool-executor/src/main.ts');
    const result = await runProcess(executor.command, executor.args, {
      ...executor.env,
      LOG_LEVEL: 'error',
      HEALTH_PORT: String(await freePort()),
      MCP_SERVERS: JSON.stringify([{ name: 'crm', url: 'ftp://x', command: 'y' }]),
    });
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/MCP_SERVERS: .*\[0\.url\]/);
  });
});
