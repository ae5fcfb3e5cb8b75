import { z } from 'zod';
import { defineTool, LOCAL_TOOL_TIMEOUT_MAX_MS } from './tool';

const base = { description: 'x', input: z.object({}), execute: async () => ({ ok: true }) };

describe('defineTool: local tools (run inside the orchestrator’s decision)', () => {
  it('accepts a pure local tool and gives it a short default timeout', () => {
    const tool = defineTool({ ...base, name: 'x.local', kind: 'pure', local: true });
    expect(tool.local).toBe(true);
    expect(tool.timeoutMs).toBe(LOCAL_TOOL_TIMEOUT_MAX_MS);
    expect(defineTool({ ...base, name: 'x.remote', kind: 'pure' }).timeoutMs).toBe(30_000);
  });

  it('refuses a local tool that may have an effect, is served elsewhere, or may hold a transaction long', () => {
    expect(() => defineTool({ ...base, name: 'x.a', kind: 'idempotent', local: true })).toThrow(
      'tool x.a: only a pure tool can be local (it is idempotent)',
    );
    expect(() => defineTool({ ...base, name: 'x.b', kind: 'at-most-once', local: true })).toThrow(
      'only a pure tool can be local (it is at-most-once)',
    );
    expect(() => defineTool({ ...base, name: 'x.c', kind: 'pure', local: true, remote: true })).toThrow(
      'tool x.c: a remote tool cannot be local',
    );
    expect(() => defineTool({ ...base, name: 'x.d', kind: 'pure', local: true, timeoutMs: 5_000 })).toThrow(
      `tool x.d: a local tool's timeoutMs must be at most ${LOCAL_TOOL_TIMEOUT_MAX_MS}`,
    );
  });
});
