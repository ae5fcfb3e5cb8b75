import type { Principal } from '@ratchet/contracts';
import { MEMORY_ROLES, mayRead, mayUseNamespace, principalSegment, readScope } from './memory.access';

const p = (id: string, ...roles: string[]): Principal => ({ id, roles });

describe('principalSegment', () => {
  it('keeps an id that is a segment, and maps gateway credentials to one, injectively', () => {
    expect(principalSegment('alice')).toBe('alice');
    expect(principalSegment('key:0b7c1e')).toBe('key.0b7c1e');
    expect(principalSegment('jwt:alice@example.com')).toBe('jwt.alice_40example.com');
    expect(principalSegment('jwt:a_b')).toBe('jwt.a_5Fb');
    expect(principalSegment('jwt:a_5Fb')).not.toBe(principalSegment('jwt:a_b'));
    expect(principalSegment('jwt:ø')).toBe('jwt._C3_B8');
    expect(principalSegment('..')).toBe('id...');
  });
});

describe('mayUseNamespace', () => {
  it('gives a principal its own user tree only, the mapped one for credentials; an admin every tree', () => {
    expect(mayUseNamespace(p('alice'), 'users/alice/prefs', 'read')).toBe(true);
    expect(mayUseNamespace(p('bob'), 'users/alice/prefs', 'read')).toBe(false);
    expect(mayUseNamespace(p('bob'), 'users/alice', 'write')).toBe(false);
    expect(mayUseNamespace(p('bob'), 'users', 'read')).toBe(false);
    expect(mayUseNamespace(p('jwt:alice@example.com'), 'users/jwt.alice_40example.com/x', 'write')).toBe(true);
    expect(mayUseNamespace(p('ops', 'admin'), 'users/alice', 'write')).toBe(true);
  });

  it('needs a role for the shared trees: read roles read, write roles read and write', () => {
    expect(mayUseNamespace(p('a'), 'org/policies', 'read')).toBe(false);
    expect(mayUseNamespace(p('a', MEMORY_ROLES.orgRead), 'org/policies', 'read')).toBe(true);
    expect(mayUseNamespace(p('a', MEMORY_ROLES.orgRead), 'org/policies', 'write')).toBe(false);
    expect(mayUseNamespace(p('a', MEMORY_ROLES.orgWrite), 'org/policies', 'write')).toBe(true);
    expect(mayUseNamespace(p('a', MEMORY_ROLES.teamRead('red')), 'teams/red/notes', 'read')).toBe(true);
    expect(mayUseNamespace(p('a', MEMORY_ROLES.teamRead('red')), 'teams/blue/notes', 'read')).toBe(false);
    expect(mayUseNamespace(p('a', MEMORY_ROLES.teamWrite('red')), 'teams/red', 'write')).toBe(true);
  });
});

describe('mayRead and readScope', () => {
  it('outside the shared trees, an item is its owner’s and its subject’s', () => {
    const item = { namespace: 'sessions/s1', owner: 'alice', subject: 'carol' };
    expect([mayRead(p('alice'), item), mayRead(p('carol'), item), mayRead(p('bob'), item)]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it("lists the trees a principal may read, for the store's query", () => {
    expect(readScope(p('ops', 'admin'))).toEqual({ kind: 'all' });
    expect(readScope(p('key:k1', MEMORY_ROLES.orgRead, MEMORY_ROLES.teamWrite('red'), 'runner'))).toMatchObject({
      kind: 'some',
      trees: ['users/key.k1', 'org', 'teams/red'],
      unclassifiedOwnedBy: 'key:k1',
    });
  });
});
