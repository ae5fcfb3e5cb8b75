import { Command } from 'commander';
import { assignAgent, listAgents } from '@ratchet/operator';
import { commandContext } from '../cli.context';

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
  return agents;
}
