import { ApiKeyRepository, JetStreamPublisher, type ApiKeyRecord } from '@ratchet/adapters';
import { assertToken, plural, safeUserName, withNats, withSchema, type CommandContext } from '../context';
import { CliError, UsageError } from '../errors';
import { table } from '../format';

export interface KeysCreateOptions {
  tenant?: string;
  /** A deployment operator credential: changes shared agents, acts for no tenant. */
  operator?: boolean;
  roles: string;
  name: string;
  expiresIn?: number;
}

/** Creates a key; the secret is printed this once and is not recoverable (only its SHA-256 is stored). */
/** The tenant id of operator keys (the gateway's OPERATOR_TENANT): no tenant can have it. */
const OPERATOR_TENANT = '*';

export async function createKey({ config, out }: CommandContext, opts: KeysCreateOptions) {
  const operator = opts.operator === true;
  if (operator && opts.tenant !== undefined)
    throw new UsageError('--operator keys act for no tenant: leave out --tenant');
  if (!operator) {
    if (opts.tenant === undefined) throw new UsageError('--tenant is required (or --operator for a deployment key)');
    assertToken('tenant', opts.tenant);
  }
  const roles = operator
    ? ['operator']
    : opts.roles
        .split(',')
        .map((r) => r.trim())
        .filter((r) => r !== '');
  if (roles.length === 0) throw new UsageError('--roles needs at least one role, e.g. --roles runner,viewer');
  if (!operator && roles.includes('operator'))
    throw new UsageError('the operator role comes only with --operator (a deployment key, not a tenant key)');
  const tenantId = operator ? OPERATOR_TENANT : opts.tenant!;
  const expiresAt = opts.expiresIn === undefined ? null : new Date(Date.now() + opts.expiresIn);
  const { key, secret } = await withSchema(config, 'gateway', (db) =>
    new ApiKeyRepository(db.sql).create({ tenantId, name: opts.name, roles, expiresAt }),
  );
  if (out.json) {
    out.jsonLine({ ...key, secret });
  } else {
    out.line(
      `${out.style('green', '✔')} key ${key.id} ${operator ? 'for the deployment (operator)' : `for tenant ${key.tenantId} (${roles.join(', ')})`}${key.expiresAt ? `, expires ${key.expiresAt}` : ''}`,
    );
    out.line(secret);
    out.note(out.style('yellow', 'the secret above is shown once: store it now (only its hash is kept)'));
  }
  return { key, secret };
}

export async function listKeys({ config, out }: CommandContext, tenant: string): Promise<ApiKeyRecord[]> {
  assertToken('tenant', tenant);
  const keys = await withSchema(config, 'gateway', (db) => new ApiKeyRepository(db.sql).listByTenant(tenant));
  if (out.json) {
    for (const k of keys) out.jsonLine(k);
    return keys;
  }
  const now = Date.now();
  const state = (k: ApiKeyRecord) =>
    k.revokedAt ? 'revoked' : k.expiresAt && Date.parse(k.expiresAt) <= now ? 'expired' : 'active';
  const lines = table([
    ['ID', 'NAME', 'ROLES', 'STATE', 'CREATED', 'EXPIRES'],
    ...keys.map((k) => [k.id, k.name, k.roles.join(','), state(k), k.createdAt, k.expiresAt ?? 'never']),
  ]);
  out.line(out.style('bold', lines[0]!));
  for (const l of lines.slice(1)) out.line(l);
  out.note(`${plural(keys.length, 'key')} in tenant ${tenant}`);
  return keys;
}

/**
 * Revokes a key and, in the same statement, announces it to the orchestrators: the key's queued and
 * running runs stop at their next step (`principal.revoked`), its schedules pause. The announcement is
 * published at once when NATS answers, else by the orchestrators' relay.
 */
export async function revokeKey(
  { config, out }: CommandContext,
  id: string,
  opts: { reason?: string | undefined } = {},
): Promise<void> {
  const revoked = await withSchema(config, 'gateway', (db) =>
    new ApiKeyRepository(db.sql).revokeAnnounced(id, {
      by: `cli:${process.env['USER'] ?? safeUserName()}`,
      reason: opts.reason ?? '',
      subjectPrefix: config.RATCHET_SUBJECT_PREFIX,
    }),
  );
  if (!revoked) throw new CliError(`no active key ${id} (unknown, or revoked already)`, undefined, 'key.not_found');
  const a = revoked.announcement;
  const published = await withNats(config, (nc) =>
    new JetStreamPublisher(nc).publish(a.subject, a.payload, { msgId: a.id, headers: a.headers }),
  ).then(
    () => true,
    () => false,
  );
  if (out.json)
    out.jsonLine({ id, tenantId: revoked.tenantId, revoked: true, announced: published ? 'now' : 'relayed' });
  else {
    out.line(`${out.style('green', '✔')} key ${id} revoked`);
    out.note(
      published
        ? 'its queued and running runs stop at their next step; its schedules are paused'
        : 'NATS did not answer: the orchestrators stop its runs and pause its schedules once their relay publishes the revocation',
    );
  }
}
