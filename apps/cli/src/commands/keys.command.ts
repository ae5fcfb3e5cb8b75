import { Command } from 'commander';
import { ApiKeyRepository, type ApiKeyRecord } from '@ratchet/adapters';
import { assertToken, commandContext, plural, withSchema, type CommandContext } from '../cli.context';
import { CliError, UsageError } from '../cli.errors';
import { parseDuration, table } from '../cli.parse';

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

export async function revokeKey({ config, out }: CommandContext, id: string): Promise<void> {
  const revoked = await withSchema(config, 'gateway', (db) => new ApiKeyRepository(db.sql).revoke(id));
  if (!revoked) throw new CliError(`no active key ${id} (unknown, or revoked already)`, undefined, 'key.not_found');
  if (out.json) out.jsonLine({ id, revoked: true });
  else out.line(`${out.style('green', '✔')} key ${id} revoked`);
}

export function keysCommand(): Command {
  const keys = new Command('keys').description('create, list and revoke API keys of the gateway');
  keys
    .command('create')
    .description('create an API key and print its secret once')
    .option('--tenant <tenant>', 'the tenant the key acts for')
    .option('--operator', 'a deployment operator key: changes the shared agents, acts for no tenant')
    .option('--roles <roles>', 'comma-separated roles (runner, viewer, approver, admin)', 'runner')
    .option('--name <name>', 'a label to recognise the key by', 'cli')
    .option('--expires-in <duration>', 'e.g. 30d, 12h (default: never)', parseDuration)
    .addHelpText(
      'after',
      '\nExamples:\n  $ ratchet keys create --tenant acme --roles runner,viewer --name ci --expires-in 30d\n  $ ratchet keys create --operator --name platform-team --expires-in 90d',
    )
    .action(async (opts: KeysCreateOptions, cmd: Command) => {
      await createKey(commandContext(cmd), opts);
    });
  keys
    .command('list')
    .description("list a tenant's keys (never their secrets)")
    .requiredOption('--tenant <tenant>', 'the tenant')
    .addHelpText('after', '\nExamples:\n  $ ratchet keys list --tenant acme --json')
    .action(async (opts: { tenant: string }, cmd: Command) => {
      await listKeys(commandContext(cmd), opts.tenant);
    });
  keys
    .command('revoke')
    .description('revoke a key now (requests with it are refused from then on)')
    .argument('<keyId>', 'the id printed by create or list')
    .addHelpText('after', '\nExamples:\n  $ ratchet keys revoke 3f1c…')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      await revokeKey(commandContext(cmd), id);
    });
  return keys;
}
