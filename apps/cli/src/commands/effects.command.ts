import { Command } from 'commander';
import { resolveEffect, showEffects, type EffectsOptions, type ResolveOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { withGatewayOptions } from '../gateway-options';

export function effectsCommand(): Command {
  const effects = new Command('effects');
  effects.addCommand(
    withGatewayOptions(
      new Command('resolve')
        .description('settle an uncertain effect by its ledger key, through the gateway (the escalation role applies)')
        .argument('<key>', 'the idempotency key of the ledger row (ratchet effects <threadId>)')
        .option('--happened', 'the outside system shows the effect happened')
        .option('--did-not-happen', 'the outside system shows it did not happen (the call fails)')
        .option('--retry', 'with --did-not-happen: run the tool again under the same key instead')
        .option('--result <json>', 'with --happened: the result to record for the call')
        .option('--reason <text>', 'why (kept in the audit trail)'),
    )
      .addHelpText(
        'after',
        `
Examples:
  $ ratchet effects resolve acme:th_…:run_…:2:call_1 --happened --result '{"charged":true}'
  $ ratchet effects resolve acme:th_…:run_…:2:call_1 --did-not-happen --reason "no charge in the PSP"`,
      )
      .action(async (key: string, opts: ResolveOptions, cmd: Command) => {
        await resolveEffect(commandContext(cmd), key, opts);
      }),
  );
  return effects
    .description("a thread's effect-ledger rows (key, tool, kind, state, attempts, started/finished) next to its log")
    .argument('<threadId>', 'the thread')
    .option('--tenant <tenant>', "the thread's tenant (found from the id when unique)")
    .addHelpText(
      'after',
      `
ATTEMPTS > 1 means the tool call was delivered again (a dedup hit re-sending the stored result, or an
idempotent retry). State "uncertain" (highlighted) means a worker died mid-effect: a human decides.

Examples:
  $ ratchet effects th_Q2x8mVn1pL0aZrT5yKe3wB
  $ ratchet effects th_Q2x8mVn1pL0aZrT5yKe3wB --json | jq 'select(.escalated)'`,
    )
    .action(async (threadId: string, opts: EffectsOptions, cmd: Command) => {
      await showEffects(commandContext(cmd), threadId, opts);
    });
}
