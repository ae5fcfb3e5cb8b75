import { McpServersConfig, mcpToolKind, mcpToolName } from './mcp.config';

describe('MCP tools', () => {
  it('take their kind from annotations: readOnly → pure, idempotent → idempotent, else at-most-once', () => {
    expect(mcpToolKind({ readOnlyHint: true, idempotentHint: true }, undefined)).toBe('pure');
    expect(mcpToolKind({ readOnlyHint: false, idempotentHint: true }, undefined)).toBe('idempotent');
    expect(mcpToolKind({ readOnlyHint: false }, undefined)).toBe('at-most-once');
    expect(mcpToolKind(undefined, undefined)).toBe('at-most-once');
  });

  it('let the configuration say otherwise', () => {
    expect(mcpToolKind({ readOnlyHint: true }, 'at-most-once')).toBe('at-most-once');
  });

  it('are named <server>.<tool>, made valid where the server uses other characters', () => {
    expect(mcpToolName('everything', 'get-sum')).toBe('everything.get-sum');
    expect(mcpToolName('crm', 'createTicket')).toBe('crm.createticket');
    expect(mcpToolName('crm', 'make ticket!')).toBe('crm.make_ticket_');
  });

  it('are configured by a list whose every problem is named', () => {
    const parsed = McpServersConfig.safeParse([
      { name: 'a', url: 'http://127.0.0.1:1/mcp', command: 'x' },
      { name: 'b' },
      { name: 'c', url: 'http://x/mcp' },
      { name: 'c', command: 'node' },
    ]);
    expect(parsed.success).toBe(false);
    const issues = parsed.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(issues).toEqual(
      expect.arrayContaining([
        '0: give exactly one of "url" or "command"',
        '1: give exactly one of "url" or "command"',
        '3.name: "c" is listed twice',
      ]),
    );
  });
});
