import type { Principal } from '@ratchet/contracts';

/** The role that may change or erase anyone's items within its tenant. */
export const MEMORY_ADMIN_ROLE = 'admin';

function isAdmin(principal: Principal): boolean {
  return principal.roles.includes(MEMORY_ADMIN_ROLE);
}

/** Updating or deleting an item: its owner, or an admin. Reading is open to the whole tenant. */
export function mayChange(principal: Principal, owner: string): boolean {
  return principal.id === owner || isAdmin(principal);
}

/** Erasing everything about a subject: the subject itself (a right to be forgotten), or an admin. */
export function mayForget(principal: Principal, subject: string): boolean {
  return principal.id === subject || isAdmin(principal);
}
