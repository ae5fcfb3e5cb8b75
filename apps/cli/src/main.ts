#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CliError, EXIT } from '@ratchet/operator';
import { ConfigError } from '@ratchet/platform';
import { globalOptions } from './cli.config';
import { agentsCommand } from './commands/agents.command';
import { approvalsCommand } from './commands/approvals.command';
import { waitpointsCommand } from './commands/waitpoints.command';
import { completionCommand } from './commands/completion.command';
import { demoCommand } from './commands/demo.command';
import { doctorCommand } from './commands/doctor.command';
import { effectsCommand } from './commands/effects.command';
import { eraseCommand } from './commands/erase.command';
import { eventsCommand } from './commands/events.command';
import { exportCommand } from './commands/export.command';
import { forkCommand } from './commands/fork.command';
import { importCommand } from './commands/import.command';
import { inboxCommand } from './commands/inbox.command';
import { keysCommand } from './commands/keys.command';
import { masterKeyCommand } from './commands/master-key.command';
import { migrateCommand } from './commands/migrate.command';
import { outboxCommand } from './commands/outbox.command';
import { rebuildCommand } from './commands/rebuild.command';
import { revocationsCommand } from './commands/revocations.command';
import { replayCommand } from './commands/replay.command';
import { retentionCommand } from './commands/retention.command';
import { runsCommand } from './commands/runs.command';
import { schedulesCommand } from './commands/schedules.command';
import { streamCheckCommand } from './commands/stream-check.command';
import { threadsCommand } from './commands/threads.command';
import { webhookSecretCommand } from './commands/webhook-secret.command';
import { webhooksCommand } from './commands/webhooks.command';
import { usageCommand } from './commands/usage.command';
import { capsCommand } from './commands/caps.command';

/** Thrown by commander's exitOverride: carries the exit code commander wanted, already mapped. */
class ParseExit extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

/** The CLI's version: its package's (apps/cli/package.json, next to src/ and dist/). */
export function cliVersion(): string {
  const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

export function buildProgram(): Command {
  const program = new Command('ratchet')
    .version(cliVersion(), '-V, --version', 'print the version')
    .description(
      'Operate Ratchet, the durable agent harness: what happened to a thread, and is the stored state right?',
    )
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .showSuggestionAfterError(true)
    .showHelpAfterError('(add --help for usage)')
    // Settings copied to every subcommand added below: usage errors and --help end in ParseExit.
    .exitOverride((error: CommanderError) => {
      throw new ParseExit(usageExitCode(error));
    });
  for (const option of globalOptions()) program.addOption(option);
  program.addHelpText(
    'after',
    `
Configuration comes from the same environment as the services (DATABASE_URL, NATS_URL,
RATCHET_SUBJECT_PREFIX, RATCHET_STREAM_PREFIX, GATEWAY_PORT, RATCHET_API_KEY); the global
options above override it. Set RATCHET_DEBUG=1 to print stack traces.

Exit codes: 0 ok · 1 the command failed · 2 usage error · 78 invalid configuration

Examples:
  $ npm run ratchet -- migrate
  $ npm run ratchet -- demo
  $ npm run ratchet -- events th_Q2x8mVn1pL0aZrT5yKe3wB --from 5
  $ npm run ratchet -- events th_Q2x8mVn1pL0aZrT5yKe3wB --follow
  $ npm run ratchet -- doctor
  $ npm run ratchet -- replay --all --verify && npm run ratchet -- stream-check --all
  $ npm run ratchet -- threads --status running --json
  $ npx ratchet runs search --status failed --since 1d
  $ npx ratchet approvals list --status pending
  $ RATCHET_SUBJECT_PREFIX=staging npm run ratchet -- migrate --service orchestrator`,
  );
  for (const command of [
    migrateCommand(),
    doctorCommand(),
    threadsCommand(),
    runsCommand(),
    eventsCommand(),
    effectsCommand(),
    approvalsCommand(),
    waitpointsCommand(),
    replayCommand(),
    rebuildCommand(),
    streamCheckCommand(),
    outboxCommand(),
    inboxCommand(),
    forkCommand(),
    exportCommand(),
    importCommand(),
    retentionCommand(),
    eraseCommand(),
    keysCommand(),
    revocationsCommand(),
    masterKeyCommand(),
    agentsCommand(),
    schedulesCommand(),
    webhooksCommand(),
    usageCommand(),
    capsCommand(),
    webhookSecretCommand(),
    demoCommand(),
    completionCommand(buildProgram),
  ]) {
    program.addCommand(command);
  }
  // addCommand does not copy settings (command() does): give the subcommands the same behaviour.
  const all = (c: Command): Command[] => c.commands.flatMap((sub) => [sub, ...all(sub)]);
  for (const sub of all(program)) {
    sub.exitOverride((error: CommanderError) => {
      throw new ParseExit(usageExitCode(error));
    });
    sub
      .showSuggestionAfterError(true)
      .showHelpAfterError('(add --help for usage)')
      .configureHelp({ showGlobalOptions: true });
  }
  return program;
}

function usageExitCode(error: CommanderError): number {
  switch (error.code) {
    case 'commander.helpDisplayed':
    case 'commander.version':
      return EXIT.ok;
    case 'commander.executeSubCommandAsync':
      return error.exitCode;
    default:
      return EXIT.usage; // unknown command/option, missing or invalid argument, help shown for lack of a command
  }
}

/** Runs the CLI and resolves to its exit code; never throws. */
export async function run(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const program = buildProgram();
  const json = argv.includes('--json');
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof ParseExit) return error.exitCode;
    return report(error, json, env['RATCHET_DEBUG'] === '1' || env['RATCHET_DEBUG'] === 'true');
  }
}

/** One line on stderr (a JSON object with --json); the stack only with RATCHET_DEBUG=1. */
function report(error: unknown, json: boolean, debug: boolean): number {
  const { code, exitCode, message } = describeError(error);
  if (json) {
    process.stderr.write(`${JSON.stringify({ error: { code, message } })}\n`);
  } else {
    process.stderr.write(`ratchet: ${message}\n`);
  }
  if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  return exitCode;
}

function describeError(error: unknown): { code: string; exitCode: number; message: string } {
  if (error instanceof ConfigError) {
    const issues = error.issues.map(
      (i) => `${i.variable}: ${i.expected}${i.received === undefined ? '' : `, got ${i.received}`}`,
    );
    return { code: error.code, exitCode: EXIT.config, message: `invalid configuration: ${issues.join('; ')}` };
  }
  if (error instanceof CliError) return { code: error.code, exitCode: error.exitCode, message: error.message };
  const e = error as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' && e.message !== '' ? e.message : String(error);
  return {
    code: typeof e?.code === 'string' ? e.code : 'cli.unexpected',
    exitCode: EXIT.failure,
    message: message.split('\n')[0]!,
  };
}

/** The `ratchet` executable: runs the CLI on the process's arguments and exits with its code. */
export function main(): void {
  // `ratchet … | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT.ok);
  });
  void run(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
    // Every pool and connection is closed by now; should a library leave a handle open, do not hang.
    setTimeout(() => process.exit(code), 2_000).unref();
  });
}

if (require.main === module) main();
