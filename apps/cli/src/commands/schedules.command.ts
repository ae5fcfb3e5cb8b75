import { Command } from 'commander';
import {
  createSchedule,
  deleteSchedule,
  listSchedules,
  SCHEDULE_PRINCIPAL,
  setSchedulePaused,
  type ScheduleCreateOptions,
} from '@ratchet/operator';
import { commandContext } from '../cli.context';

export function schedulesCommand(): Command {
  const cmd = new Command('schedules').description("a tenant's schedules: runs that start on a cron or an interval");
  cmd
    .command('list')
    .description("list a tenant's schedules")
    .requiredOption('--tenant <tenant>', 'the tenant')
    .addHelpText('after', '\nExamples:\n  $ ratchet schedules list --tenant acme')
    .action(async (opts: { tenant: string }, c: Command) => {
      await listSchedules(commandContext(c), opts.tenant);
    });
  cmd
    .command('create')
    .description('create a schedule (exactly one of --cron, --every)')
    .requiredOption('--tenant <tenant>', 'the tenant')
    .requiredOption('--agent <name>', 'the agent each tick runs')
    .requiredOption('--input <text>', "each tick's user message")
    .option('--id <id>', 'a name within the tenant (default: generated)')
    .option('--cron <expression>', 'cron: 5 fields, or 6 with seconds first')
    .option('--timezone <iana>', 'the time zone the cron is read in (default UTC)')
    .option('--every <seconds>', 'an interval in seconds')
    .option('--thread <policy>', 'new (a thread per tick, default) or shared (one thread)')
    .option('--overlap <policy>', 'skip (default), enqueue (shared thread) or cancel-previous')
    .option('--catch-up <policy>', 'after downtime: skip (default), once or all')
    .option('--catch-up-max <n>', 'with --catch-up all: at most this many missed ticks (default 10)')
    .option('--end-at <time>', 'no tick after this RFC 3339 time')
    .option('--webhook <url>', "each tick's run posts its outcome here (docs/webhooks.md)")
    .option('--paused', 'create it paused')
    .option('--as <principal>', `whom the runs act as (default ${SCHEDULE_PRINCIPAL})`)
    .addHelpText(
      'after',
      `\nExamples:
  $ ratchet schedules create --tenant acme --agent triage --input "triage the queue" --cron "0 9 * * 1-5" --timezone Europe/Berlin
  $ ratchet schedules create --tenant acme --id sync --agent sync --input go --every 3600 --catch-up once`,
    )
    .action(async (opts: ScheduleCreateOptions, c: Command) => {
      await createSchedule(commandContext(c), opts);
    });
  for (const [name, paused, what] of [
    ['pause', true, 'pause a schedule (no tick until it is resumed)'],
    ['resume', false, 'resume a schedule from now (ticks missed while paused are not caught up)'],
  ] as const)
    cmd
      .command(`${name} <id>`)
      .description(what)
      .requiredOption('--tenant <tenant>', 'the tenant')
      .action(async (id: string, opts: { tenant: string }, c: Command) => {
        await setSchedulePaused(commandContext(c), opts.tenant, id, paused);
      });
  cmd
    .command('delete <id>')
    .description('delete a schedule (runs it started go on)')
    .requiredOption('--tenant <tenant>', 'the tenant')
    .action(async (id: string, opts: { tenant: string }, c: Command) => {
      await deleteSchedule(commandContext(c), opts.tenant, id);
    });
  return cmd;
}
