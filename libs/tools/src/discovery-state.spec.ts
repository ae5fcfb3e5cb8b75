import { discoveryRound, type DiscoveredEndpoint } from './discovery-state';

const seen = (subject: string) => ({ subject, tool: subject.split('.').slice(-2).join('.') });

describe('a discovery round', () => {
  it('adds new subjects, keeps what it knew of seen ones, and drops a subject missing two rounds in a row', () => {
    const first = discoveryRound(new Map(), [seen('p.toolsvc.crm.a'), seen('p.toolsvc.crm.b')]);
    expect([...first.next.keys()]).toEqual(['p.toolsvc.crm.a', 'p.toolsvc.crm.b']);
    expect(first.describe).toEqual(['p.toolsvc.crm.a', 'p.toolsvc.crm.b']);
    first.next.get('p.toolsvc.crm.a')!.digest = 'd1';

    const second = discoveryRound(first.next, [seen('p.toolsvc.crm.a')]);
    expect(second.next.get('p.toolsvc.crm.a')).toMatchObject({ digest: 'd1', missed: 0 });
    expect(second.next.get('p.toolsvc.crm.b')).toMatchObject({ missed: 1 });
    expect(second.gone).toEqual([]);

    const third = discoveryRound(second.next, [seen('p.toolsvc.crm.a')]);
    expect(third.gone).toEqual(['p.toolsvc.crm.b']);
    expect([...third.next.keys()]).toEqual(['p.toolsvc.crm.a']);

    // A service back before its second miss keeps its tool.
    const back = discoveryRound(
      new Map<string, DiscoveredEndpoint>([['p.toolsvc.crm.b', { ...seen('p.toolsvc.crm.b'), missed: 1 }]]),
      [seen('p.toolsvc.crm.b')],
    );
    expect(back.next.get('p.toolsvc.crm.b')).toMatchObject({ missed: 0 });
  });
});
