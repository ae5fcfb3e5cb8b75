import { Command } from 'commander';
import { doctor, type DoctorOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { parsePositiveInt } from '../cli.parse';

export function doctorCommand(): Command {
  return new Command('doctor')
    .description(
      'check Postgres, migrations, clock skew, NATS, and the streams and consumers against the declared topology',
    )
    .option('--max-skew-ms <ms>', 'clock skew to Postgres that fails the check', parsePositiveInt, 500)
    .addHelpText(
      'after',
      `
Exits 0 when every check passes, 1 otherwise. Streams and consumers are compared with the topology
the services declare for this configuration (RATCHET_SUBJECT_PREFIX, RATCHET_STREAM_PREFIX,
RATCHET_ACK_WAIT_MS, RATCHET_DUPLICATE_WINDOW_MS), so set the same environment as the services.

Examples:
  $ ratchet doctor
  $ ratchet doctor --json | jq 'select(.ok | not)'`,
    )
    .action(async (opts: DoctorOptions, cmd: Command) => {
      process.exitCode = await doctor(commandContext(cmd), opts);
    });
}
