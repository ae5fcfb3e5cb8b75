import { Command, Option } from 'commander';
import { loadCliConfig, type GlobalOptions } from '@ratchet/operator';
import { processOutput } from '@ratchet/operator';
import { migrate, SERVICE_NAMES, type MigrateOptions } from '@ratchet/operator';

export function migrateCommand(): Command {
  return new Command('migrate')
    .description(
      'create the database if missing, apply every pending migration of each service schema, and create or update the JetStream streams and consumers (idempotent)',
    )
    .addOption(new Option('--service <name>', "only this service's schema").choices(SERVICE_NAMES))
    .option('--no-topology', 'skip the JetStream streams and consumers (Postgres only)')
    .addHelpText(
      'after',
      `
Examples:
  $ ratchet migrate
  $ ratchet migrate --service orchestrator --no-topology
  $ DATABASE_URL=postgres://postgres@db:5432/ratchet ratchet migrate --json`,
    )
    .action(async (opts: MigrateOptions, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      await migrate(loadCliConfig(globals), opts, processOutput(globals.json === true));
    });
}
