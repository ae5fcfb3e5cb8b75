import { Command } from 'commander';
import { createKey, listKeys, revokeKey, type KeysCreateOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { parseDuration } from '../cli.parse';

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
    .option('--reason <text>', 'why (given to the runs it stops and the schedules it pauses)')
    .addHelpText(
      'after',
      "\nIts queued and running runs stop at their next step (run.cancelled, reason principal.revoked: …) and its\nschedules pause.\n\nExamples:\n  $ ratchet keys revoke 3f1c… --reason 'laptop lost'",
    )
    .action(async (id: string, opts: { reason?: string }, cmd: Command) => {
      await revokeKey(commandContext(cmd), id, opts);
    });
  return keys;
}
