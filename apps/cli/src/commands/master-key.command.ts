import { Command } from 'commander';
import {
  initMasterKey,
  retireMasterKey,
  rewrapDataKeys,
  rotateMasterKey,
  type MasterKeyFileOptions,
} from '@ratchet/operator';
import { commandContext } from '../cli.context';

export function masterKeyCommand(): Command {
  const fileOption = ['--file <path>', 'the key file (default: $RATCHET_KEY_FILE)'] as const;
  const command = new Command('master-key')
    .description("the master key file that seals threads' content at rest: make it, rotate it, retire old keys")
    .addHelpText(
      'after',
      `
Every service that reads or writes threads (orchestrator, gateway, the CLI) needs the same file in
RATCHET_KEY_FILE. Each thread's content is sealed with a data key of its own, wrapped by the file's
first master key; erasing the thread destroys its data key (docs/security.md#content-at-rest).

Rotation: rotate (a new key first; the old ones still unwrap) → roll the file out → rewrap → retire.

Examples:
  $ ratchet master-key init --file /etc/ratchet/master.json
  $ ratchet master-key rotate --id m20270101
  $ ratchet master-key rewrap
  $ ratchet master-key retire --id m20261201`,
    );
  command
    .command('init')
    .description('write a new key file (mode 0600); refuses to overwrite one')
    .option(...fileOption)
    .option('--id <id>', 'the master key id (default: m<yyyymmdd>)')
    .action((opts: MasterKeyFileOptions, cmd: Command) => initMasterKey(commandContext(cmd), opts));
  command
    .command('rotate')
    .description('put a new master key first in the file; the older ones still unwrap until retired')
    .option(...fileOption)
    .option('--id <id>', 'the new master key id (default: m<yyyymmdd>)')
    .action((opts: MasterKeyFileOptions, cmd: Command) => rotateMasterKey(commandContext(cmd), opts));
  command
    .command('rewrap')
    .description("wrap every thread's data key under the file's first master key")
    .option(...fileOption)
    .action((opts: MasterKeyFileOptions, cmd: Command) => rewrapDataKeys(commandContext(cmd), opts));
  command
    .command('retire')
    .description('take an old master key out of the file; refuses while a data key is wrapped with it')
    .option(...fileOption)
    .requiredOption('--id <id>', 'the master key to retire')
    .action((opts: MasterKeyFileOptions, cmd: Command) => retireMasterKey(commandContext(cmd), opts));
  return command;
}
