import type { Command } from 'commander';
import { loadCliConfig, processOutput, type CommandContext, type GlobalOptions } from '@ratchet/operator';

export function commandContext(cmd: Command): CommandContext {
  const globals = cmd.optsWithGlobals<GlobalOptions>();
  return { config: loadCliConfig(globals), out: processOutput(globals.json === true) };
}
