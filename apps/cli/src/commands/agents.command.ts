import { Command } from 'commander';
import { assignAgent, listAgents, listSlotLimits, setSlotLimit, unsetSlotLimit } from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { parsePositiveInt } from '../cli.parse';

export function agentsCommand(): Command {
  const agents = new Command('agents').description("agent definitions: the deployment's shared ones and tenants'");
  agents
    .command('list')
    .description("list the shared agents, or a tenant's (its own and the shared ones)")
    .option('--tenant <tenant>', 'the tenant whose agents to list')
    .addHelpText('after', '\nExamples:\n  $ ratchet agents list\n  $ ratchet agents list --tenant acme --json')
    .action(async (opts: { tenant?: string }, cmd: Command) => {
      await listAgents(commandContext(cmd), opts.tenant);
    });
  agents
    .command('assign <name>')
    .description('hand a shared agent, with every version, to one tenant (the others stop seeing it)')
    .requiredOption('--tenant <tenant>', 'the tenant that gets it')
    .addHelpText('after', '\nExamples:\n  $ ratchet agents assign support --tenant acme')
    .action(async (name: string, opts: { tenant: string }, cmd: Command) => {
      await assignAgent(commandContext(cmd), name, opts.tenant);
    });
  agents.addCommand(limitsCommand());
  return agents;
}

/** A tenant's own max for a concurrency key (slot) of an agent, in place of the agent's (ADR 0045). */
function limitsCommand(): Command {
  const limits = new Command('limits').description(
    "tenants' own max for an agent's concurrency keys (slots), in place of the agent's",
  );
  limits
    .command('set <agent> <slot>')
    .description('give one tenant its own max for a slot of an agent (runs requested from now on)')
    .requiredOption('--tenant <tenant>', 'the tenant')
    .requiredOption('--max <n>', 'the most runs of the tenant in flight per value of the key', parsePositiveInt)
    .addHelpText('after', '\nExamples:\n  $ ratchet agents limits set support customer --tenant acme --max 10')
    .action(async (agent: string, slot: string, opts: { tenant: string; max: number }, cmd: Command) => {
      await setSlotLimit(commandContext(cmd), { tenant: opts.tenant, agent, slot }, opts.max);
    });
  limits
    .command('unset <agent> <slot>')
    .description("remove a tenant's own max for a slot: the agent's applies again")
    .requiredOption('--tenant <tenant>', 'the tenant')
    .addHelpText('after', '\nExamples:\n  $ ratchet agents limits unset support customer --tenant acme')
    .action(async (agent: string, slot: string, opts: { tenant: string }, cmd: Command) => {
      await unsetSlotLimit(commandContext(cmd), { tenant: opts.tenant, agent, slot });
    });
  limits
    .command('list')
    .description("list the tenants' own maxes, beside the max each agent declares")
    .option('--tenant <tenant>', "only this tenant's")
    .addHelpText(
      'after',
      '\nExamples:\n  $ ratchet agents limits list\n  $ ratchet agents limits list --tenant acme --json',
    )
    .action(async (opts: { tenant?: string }, cmd: Command) => {
      await listSlotLimits(commandContext(cmd), opts.tenant);
    });
  return limits;
}
