import { Command } from 'commander';
import {
  assignAgent,
  changeAgentSettings,
  listAgentSettings,
  listAgents,
  listSlotLimits,
  setSlotLimit,
  unsetSlotLimit,
} from '@ratchet/operator';
import { commandContext } from '../cli.context';
import { InvalidArgumentError } from 'commander';
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
  agents.addCommand(settingsCommand());
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

function parseInteger(value: string): number {
  if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}

/** A tenant's queued TTL, default priority and throttle for an agent's runs, in place of the agent's. */
function settingsCommand(): Command {
  const settings = new Command('settings').description(
    "tenants' own queued TTL, default priority and throttle for an agent's runs, in place of the agent's",
  );
  settings
    .command('set <agent>')
    .description(
      "give one tenant's runs of an agent their own queued TTL, priority or throttle (runs requested from now on)",
    )
    .requiredOption('--tenant <tenant>', 'the tenant')
    .option('--queue-ttl <seconds>', 'how long a run may wait to start after its request', parsePositiveInt)
    .option('--priority <seconds>', 'the default priority of its runs, -600 to 600', parseInteger)
    .option('--throttle-limit <n>', 'the most runs that start in any throttle period', parsePositiveInt)
    .option('--throttle-period <seconds>', "the throttle's period, 1 to 86400", parsePositiveInt)
    .addHelpText(
      'after',
      '\nExamples:\n  $ ratchet agents settings set support --tenant acme --queue-ttl 3600\n  $ ratchet agents settings set batch --tenant acme --priority -300\n  $ ratchet agents settings set support --tenant acme --throttle-limit 100 --throttle-period 60',
    )
    .action(
      async (
        agent: string,
        opts: { tenant: string; queueTtl?: number; priority?: number; throttleLimit?: number; throttlePeriod?: number },
        cmd: Command,
      ) => {
        await changeAgentSettings(commandContext(cmd), opts.tenant, agent, {
          ...(opts.queueTtl !== undefined ? { queueTtlSeconds: opts.queueTtl } : {}),
          ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
          ...(opts.throttleLimit !== undefined ? { throttleLimit: opts.throttleLimit } : {}),
          ...(opts.throttlePeriod !== undefined ? { throttlePeriodSeconds: opts.throttlePeriod } : {}),
        });
      },
    );
  settings
    .command('unset <agent>')
    .description(
      "remove a tenant's own queued TTL, priority or throttle (all when none is named): the agent's apply again",
    )
    .requiredOption('--tenant <tenant>', 'the tenant')
    .option('--queue-ttl', 'remove the queued TTL')
    .option('--priority', 'remove the priority')
    .option('--throttle', "remove the throttle's limit and period")
    .addHelpText('after', '\nExamples:\n  $ ratchet agents settings unset support --tenant acme --queue-ttl')
    .action(
      async (
        agent: string,
        opts: { tenant: string; queueTtl?: boolean; priority?: boolean; throttle?: boolean },
        cmd: Command,
      ) => {
        const all = !opts.queueTtl && !opts.priority && !opts.throttle;
        await changeAgentSettings(commandContext(cmd), opts.tenant, agent, {
          ...(all || opts.queueTtl ? { queueTtlSeconds: null } : {}),
          ...(all || opts.priority ? { priority: null } : {}),
          ...(all || opts.throttle ? { throttleLimit: null, throttlePeriodSeconds: null } : {}),
        });
      },
    );
  settings
    .command('list')
    .description("list the tenants' own settings for their agents")
    .option('--tenant <tenant>', "only this tenant's")
    .addHelpText('after', '\nExamples:\n  $ ratchet agents settings list --tenant acme --json')
    .action(async (opts: { tenant?: string }, cmd: Command) => {
      await listAgentSettings(commandContext(cmd), opts.tenant);
    });
  return settings;
}
