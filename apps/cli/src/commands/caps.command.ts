import { Command } from 'commander';
import { changeCaps, listCaps, parseCostAmount } from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { parsePositiveInt } from '../cli.parse';

/** Tenants' token caps (docs/flow-control.md#token-and-cost-caps), set by an operator. */
export function capsCommand(): Command {
  const caps = new Command('caps').description(
    "tenants' token and cost caps per UTC day and month: a model call that could pass one is not made, and its run stops",
  );
  caps
    .command('set')
    .description("set or raise a tenant's token caps (model calls decided from now on)")
    .requiredOption('--tenant <tenant>', 'the tenant')
    .option('--day-tokens <n>', 'tokens (input + output) per UTC day at most', parsePositiveInt)
    .option('--month-tokens <n>', 'tokens (input + output) per UTC month at most', parsePositiveInt)
    .option('--day-cost <amount>', "cost per UTC day at most, in the price table's currency (MODEL_PRICES)")
    .option('--month-cost <amount>', "cost per UTC month at most, in the price table's currency")
    .addHelpText(
      'after',
      '\nExamples:\n  $ ratchet caps set --tenant acme --day-tokens 2000000\n  $ ratchet caps set --tenant acme --day-tokens 2000000 --month-tokens 40000000\n  $ ratchet caps set --tenant acme --day-cost 25 --month-cost 500',
    )
    .action(
      async (
        opts: { tenant: string; dayTokens?: number; monthTokens?: number; dayCost?: string; monthCost?: string },
        cmd: Command,
      ) => {
        await changeCaps(commandContext(cmd), opts.tenant, {
          ...(opts.dayTokens !== undefined ? { dayTokens: opts.dayTokens } : {}),
          ...(opts.monthTokens !== undefined ? { monthTokens: opts.monthTokens } : {}),
          ...(opts.dayCost !== undefined ? { dayCost: parseCostAmount('--day-cost', opts.dayCost) } : {}),
          ...(opts.monthCost !== undefined ? { monthCost: parseCostAmount('--month-cost', opts.monthCost) } : {}),
        });
      },
    );
  caps
    .command('unset')
    .description("remove a tenant's caps (all when none is named)")
    .requiredOption('--tenant <tenant>', 'the tenant')
    .option('--day-tokens', 'remove the daily token cap')
    .option('--month-tokens', 'remove the monthly token cap')
    .option('--day-cost', 'remove the daily cost cap')
    .option('--month-cost', 'remove the monthly cost cap')
    .addHelpText('after', '\nExamples:\n  $ ratchet caps unset --tenant acme --day-tokens')
    .action(
      async (
        opts: { tenant: string; dayTokens?: boolean; monthTokens?: boolean; dayCost?: boolean; monthCost?: boolean },
        cmd: Command,
      ) => {
        const all = !opts.dayTokens && !opts.monthTokens && !opts.dayCost && !opts.monthCost;
        await changeCaps(commandContext(cmd), opts.tenant, {
          ...(all || opts.dayTokens ? { dayTokens: null } : {}),
          ...(all || opts.monthTokens ? { monthTokens: null } : {}),
          ...(all || opts.dayCost ? { dayCost: null } : {}),
          ...(all || opts.monthCost ? { monthCost: null } : {}),
        });
      },
    );
  caps
    .command('list')
    .description("the tenants' token caps, with what is counted against them today and this month")
    .option('--tenant <tenant>', "only this tenant's")
    .addHelpText('after', '\nExamples:\n  $ ratchet caps list\n  $ ratchet caps list --tenant acme --json')
    .action(async (opts: { tenant?: string }, cmd: Command) => {
      await listCaps(commandContext(cmd), opts.tenant);
    });
  return caps;
}
