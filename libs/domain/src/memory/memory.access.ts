import type { MemoryItem, Principal } from '@ratchet/contracts';

/** The role that may read, change or erase anything in its tenant's memory. */
export const MEMORY_ADMIN_ROLE = 'admin';

/**
 * Roles for the shared trees: `org/` is the tenant's, `teams/<team>/` a team's. A write role implies
 * reading. Without one, a principal neither reads nor writes there — so nobody can plant an
 * "instruction" that is recalled into everyone's prompts without being given the right to.
 */
export const MEMORY_ROLES = {
  orgRead: 'memory.org.read',
  orgWrite: 'memory.org.write',
  teamRead: (team: string) => `memory.team.${team}.read`,
  teamWrite: (team: string) => `memory.team.${team}.write`,
} as const;

/** Trees with rules of their own; an item anywhere else is readable by its owner and its subject only. */
const CLASSIFIED_TREES = ['users', 'org', 'teams'] as const;

const SEGMENT_RE = /^[A-Za-z0-9_.-]+$/;
const SAFE_CHAR = /[A-Za-z0-9.-]/;

function isAdmin(principal: Principal): boolean {
  return principal.roles.includes(MEMORY_ADMIN_ROLE);
}

/**
 * The namespace segment of a principal's own tree (`users/<segment>/`). An id that is a segment
 * already (`alice`, `svc.bot-1`) is itself; a gateway credential's id is mapped — `key:<id>` →
 * `key.<id>`, `jwt:<sub>` → `jwt.<sub>` — with every character outside `[A-Za-z0-9.-]` of the rest
 * written as `_` and its UTF-8 bytes in hex (`jwt:alice@example.com` → `jwt.alice_40example.com`), so
 * two different subjects never share a tree. Ids starting with `key.`, `jwt.` or `id.` are reserved for that.
 */
export function principalSegment(id: string): string {
  const credential = /^(key|jwt):(.+)$/s.exec(id);
  if (!credential && SEGMENT_RE.test(id) && id !== '.' && id !== '..') return id;
  const [kind, rest] = credential ? [credential[1]!, credential[2]!] : ['id', id];
  let out = '';
  for (const ch of rest) {
    if (SAFE_CHAR.test(ch)) out += ch;
    else for (const byte of new TextEncoder().encode(ch)) out += `_${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return `${kind}.${out}`;
}

export type MemoryAccess = 'read' | 'write';

/**
 * Whether the principal may read or write in a namespace, by the namespace alone: its own
 * `users/<segment>/` tree, `org/` and `teams/<team>/` with a role for them, anything as an admin.
 * Other trees are open at this level and decided per item (`mayRead`, `mayChange`).
 */
export function mayUseNamespace(principal: Principal, namespace: string, access: MemoryAccess): boolean {
  if (isAdmin(principal)) return true;
  const [tree = '', second] = namespace.split('/');
  switch (tree) {
    case 'users':
      return second !== undefined && second === principalSegment(principal.id);
    case 'org':
      return (
        principal.roles.includes(MEMORY_ROLES.orgWrite) ||
        (access === 'read' && principal.roles.includes(MEMORY_ROLES.orgRead))
      );
    case 'teams':
      return (
        second !== undefined &&
        (principal.roles.includes(MEMORY_ROLES.teamWrite(second)) ||
          (access === 'read' && principal.roles.includes(MEMORY_ROLES.teamRead(second))))
      );
    default:
      return true;
  }
}

/** Whether the principal may read this item: its namespace's rule, and outside the shared trees, ownership. */
export function mayRead(principal: Principal, item: Pick<MemoryItem, 'namespace' | 'owner' | 'subject'>): boolean {
  if (!mayUseNamespace(principal, item.namespace, 'read')) return false;
  if (isAdmin(principal) || isClassified(item.namespace)) return true;
  return item.owner === principal.id || item.subject === principal.id;
}

function isClassified(namespace: string): boolean {
  return (CLASSIFIED_TREES as readonly string[]).includes(namespace.split('/')[0] ?? '');
}

/**
 * What a list or search may return to the principal, for the store to put in its query: everything
 * (an admin), or these trees plus, outside the shared trees, the items it owns or is the subject of.
 */
export type ReadScope =
  { kind: 'all' } | { kind: 'some'; trees: string[]; unclassifiedOwnedBy: string; classified: readonly string[] };

export function readScope(principal: Principal): ReadScope {
  if (isAdmin(principal)) return { kind: 'all' };
  const trees = [`users/${principalSegment(principal.id)}`];
  if (principal.roles.includes(MEMORY_ROLES.orgRead) || principal.roles.includes(MEMORY_ROLES.orgWrite))
    trees.push('org');
  for (const role of principal.roles) {
    const team = /^memory\.team\.([A-Za-z0-9_.-]+)\.(read|write)$/.exec(role)?.[1];
    if (team && team !== '.' && team !== '..' && !trees.includes(`teams/${team}`)) trees.push(`teams/${team}`);
  }
  return { kind: 'some', trees, unclassifiedOwnedBy: principal.id, classified: CLASSIFIED_TREES };
}

/** Updating or deleting an item: its owner, or an admin (on top of the namespace's write rule). */
export function mayChange(principal: Principal, owner: string): boolean {
  return principal.id === owner || isAdmin(principal);
}

/** Erasing everything about a subject: the subject itself (a right to be forgotten), or an admin. */
export function mayForget(principal: Principal, subject: string): boolean {
  return principal.id === subject || isAdmin(principal);
}
