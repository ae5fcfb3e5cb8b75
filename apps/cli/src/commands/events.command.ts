import { Command, InvalidArgumentError } from 'commander';
import { SubjectToken, type ThreadEvent } from '@ratchet/contracts';
import { DEFAULT_TENANT, loadCliConfig, type CliConfig, type GlobalOptions } from '../cli.config';
import { CliError, UsageError } from '../cli.errors';
import { processOutput, type Output } from '../cli.output';
import { readThreadEvents } from '../thread-log';
import { formatTimeline } from '../timeline/format-timeline';

export interface EventsOptions {
  tenant: string;
  /** First version to show (inclusive). */
  from?: number;
}

/** Prints a thread's log from Postgres: a timeline, or one JSON event per line with --json. */
export async function showEvents(
  config: CliConfig,
  threadId: string,
  options: EventsOptions,
  out: Output,
): Promise<ThreadEvent[]> {
  assertToken('thread id', threadId);
  assertToken('tenant', options.tenant);
  const from = options.from ?? 1;
  const events = await readThreadEvents(config.DATABASE_URL, options.tenant, threadId, from - 1);
  if (events.length === 0) {
    if (from > 1) {
      out.note(`thread ${threadId} (tenant ${options.tenant}) has no events from v${from} on`);
      return events;
    }
    throw new CliError(`thread ${threadId} has no events in tenant ${options.tenant}`, undefined, 'thread.not_found');
  }
  if (out.json) {
    for (const event of events) out.jsonLine(event);
  } else {
    const last = events.at(-1)!;
    out.line(
      out.style('bold', `thread ${threadId}`) +
        out.style(
          'dim',
          ` · tenant ${options.tenant} · v${events[0]!.version}–v${last.version} · ${events.length} event${events.length === 1 ? '' : 's'}`,
        ),
    );
    for (const line of formatTimeline(events, { style: out.style })) out.line(line);
  }
  return events;
}

function assertToken(what: string, value: string): void {
  if (!SubjectToken.safeParse(value).success) {
    throw new UsageError(`invalid ${what} ${JSON.stringify(value)}: expected letters, digits, "_" or "-" only`);
  }
}

export function parseVersion(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('expected a version number >= 1');
  return Number(value);
}

export function eventsCommand(): Command {
  return new Command('events')
    .description("print a thread's event log from Postgres (the system of record) as a timeline")
    .argument('<threadId>', 'the thread, e.g. th_Q2x8mVn1pL0aZrT5yKe3wB')
    .option('--tenant <tenant>', 'the tenant the thread belongs to', DEFAULT_TENANT)
    .option('--from <version>', 'first version to show', parseVersion)
    .addHelpText(
      'after',
      `
Examples:
  $ ratchet events th_Q2x8mVn1pL0aZrT5yKe3wB
  $ ratchet events th_Q2x8mVn1pL0aZrT5yKe3wB --tenant acme --from 12
  $ ratchet events th_Q2x8mVn1pL0aZrT5yKe3wB --json | jq -c 'select(.type == "tool.completed")'`,
    )
    .action(async (threadId: string, opts: EventsOptions, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      await showEvents(loadCliConfig(globals), threadId, opts, processOutput(globals.json === true));
    });
}
