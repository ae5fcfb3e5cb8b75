import { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { DEFAULT_TENANT, loadCliConfig, LOCAL_DEMO_API_KEY, type GlobalOptions } from '@ratchet/operator';
import { EXIT } from '@ratchet/operator';
import { processOutput } from '@ratchet/operator';
import { DEFAULT_DEMO_MESSAGE, runDemo, type DemoOptions } from '@ratchet/operator';

function parseSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a number of seconds > 0');
  return n;
}

export function demoCommand(): Command {
  return new Command('demo')
    .description(
      'start a run of the demo agent through the gateway, follow it live on NATS, and print its timeline from Postgres',
    )
    .option('--gateway <url>', 'gateway base URL (default: http://127.0.0.1:$GATEWAY_PORT, port 8080)')
    .option('--api-key <key>', `API key (default: $RATCHET_API_KEY, else the local dev key ${LOCAL_DEMO_API_KEY})`)
    .option('--message <text>', 'what to ask the demo agent', DEFAULT_DEMO_MESSAGE)
    .option('--timeout <seconds>', 'how long to wait for the run to end', parseSeconds, 60)
    .option('--tenant <tenant>', "the API key's tenant (used unless the gateway names it)", DEFAULT_TENANT)
    .addHelpText(
      'after',
      `
Exits 0 when the run completed, 1 when it failed, was cancelled or did not end in time.

Examples:
  $ npm start                     # in another terminal: the services, with the local dev key
  $ ratchet demo
  $ ratchet demo --message "What is the weather in Lisbon?" --timeout 20
  $ ratchet demo --gateway https://ratchet.example.com --api-key "$KEY" --json`,
    )
    .action(async (opts: DemoOptions, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const result = await runDemo(loadCliConfig(globals), opts, processOutput(globals.json === true));
      if (result.status !== 'completed') process.exitCode = EXIT.failure;
    });
}
