import { z } from 'zod';
import { ToolCatalog, type DynamicToolSource, type OfferedTool } from './catalog';
import { ToolRegistry } from './registry';
import { defineTool, type AnyTool } from './tool';

const tool = (name: string, source: string): AnyTool => ({
  ...(defineTool({ name, description: name, kind: 'pure', input: z.object({}), execute: async () => ({}) }) as AnyTool),
  source,
});
const source = (id: string, offered: OfferedTool[]): DynamicToolSource => ({
  id,
  offered: () => offered,
  problems: () => [],
});

describe('the tool catalog', () => {
  const base = new ToolRegistry([tool('demo.weather', 'builtin')]);
  const catalog = new ToolCatalog(base, [
    source('remote', [
      { tool: tool('crm.ticket', 'remote:p.toolsvc.crm.ticket') },
      { tool: tool('acme.only', 'remote:p.tenants.acme.toolsvc.acme.only'), tenant: 'acme' },
      // Globex's service names a tool every tenant has: the shared one wins, globex's is withheld.
      { tool: tool('crm.ticket', 'remote:p.tenants.globex.toolsvc.crm.ticket'), tenant: 'globex' },
      { tool: tool('demo.weather', 'remote:p.toolsvc.demo.weather') },
    ]),
  ]);

  it("shows a tenant its own tools and the shared ones, never another tenant's", () => {
    expect(catalog.list('acme').map((t) => `${t.tool.name}:${t.scope}`)).toEqual([
      'acme.only:tenant',
      'crm.ticket:shared',
      'demo.weather:shared',
    ]);
    expect(catalog.get('globex', 'acme.only')).toBeUndefined();
    expect(catalog.get(undefined, 'acme.only')).toBeUndefined();
    expect(catalog.get('acme', 'acme.only')?.source).toBe('remote:p.tenants.acme.toolsvc.acme.only');
  });

  it('keeps a taken name with its first holder and names the offer it withheld', () => {
    expect(catalog.get('globex', 'crm.ticket')?.source).toBe('remote:p.toolsvc.crm.ticket');
    expect(catalog.get('acme', 'demo.weather')?.source).toBe('builtin');
    expect(catalog.problems('globex').map((p) => `${p.code} ${p.tool}`)).toEqual([
      'tool.name_taken demo.weather',
      'tool.name_taken crm.ticket',
    ]);
    // Another tenant's withheld offers are not its business.
    expect(catalog.problems('acme').map((p) => p.tool)).toEqual(['demo.weather']);
  });

  it('looks again when a call names a tool nobody offers yet', async () => {
    const offered: OfferedTool[] = [];
    const late: DynamicToolSource = {
      id: 'late',
      offered: () => offered,
      problems: () => [],
      refresh: async () => void offered.push({ tool: tool('svc.new', 'remote:p.toolsvc.svc.new') }),
    };
    const c = new ToolCatalog(new ToolRegistry(), [late]);
    await expect(c.resolve('acme', 'svc.new')).resolves.toMatchObject({ name: 'svc.new' });
  });
});
