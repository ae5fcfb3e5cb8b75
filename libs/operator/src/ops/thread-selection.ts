import { type Database, type ThreadKey } from '@ratchet/adapters';
import { listThreadKeysWithSnapshots } from '@ratchet/adapters/operator';
import { UsageError } from '../errors';
import { assertToken, resolveTenant } from '../context';

export interface SelectionOptions {
  all?: boolean;
  tenant?: string;
  after?: string;
}

/**
 * The threads a command works on, in (tenant, thread) order: one thread by id, or every thread with a
 * log or a snapshot (`--all`, optionally one `--tenant`, resuming `--after <thread>`).
 */
export async function selectThreads(
  db: Database,
  threadId: string | undefined,
  opts: SelectionOptions,
): Promise<ThreadKey[]> {
  if (threadId !== undefined && opts.all) throw new UsageError('give a thread id or --all, not both');
  if (threadId !== undefined) return [{ tenantId: await resolveTenant(db, threadId, opts.tenant), threadId }];
  if (!opts.all && opts.tenant === undefined) throw new UsageError('give a thread id, --tenant <t> or --all');
  if (opts.tenant !== undefined) assertToken('tenant', opts.tenant);
  let after: ThreadKey | undefined;
  if (opts.after !== undefined) {
    const [tenant, thread] = opts.after.includes('/') ? opts.after.split('/', 2) : [opts.tenant, opts.after];
    if (tenant === undefined || thread === undefined) {
      throw new UsageError('--after needs <tenant>/<thread> (or --tenant with a bare thread id)');
    }
    after = { tenantId: tenant, threadId: thread };
  }
  // Compacted threads have no version-1 event any more: they are found by their snapshot.
  return listThreadKeysWithSnapshots(db.sql, { tenantId: opts.tenant, after });
}

export const keyOf = (k: ThreadKey) => `${k.tenantId}/${k.threadId}`;
