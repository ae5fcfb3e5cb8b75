import { Command } from 'commander';
import { replay, type ReplayOptions } from '@ratchet/operator';
import { commandContext } from '../cli.context';

export function replayCommand(): Command {
  return new Command('replay')
    .description(
      "fold threads' logs with the current code and diff them against the stored projections (threads row, runs rows, messages)",
    )
    .argument('[threadId]', 'one thread (else --all or --tenant)')
    .option('--all', 'every thread that has a log')
    .option('--tenant <tenant>', "the thread's tenant, or with no thread id: every thread of this tenant")
    .option('--after <tenant/thread>', 'with --all: start after this thread (resume a long run)')
    .option('--verify', 'exit 1 when any projection diverges from its log')
    .addHelpText(
      'after',
      `
Each divergence is printed as a path, e.g. "runs.run_7f….steps: stored 9 ≠ replayed 2" or
"messages.12.content: …" (message 12 of the conversation).
Exits 1 with --verify when anything diverged (fix it with \`ratchet rebuild\`), else 0.

Examples:
  $ ratchet replay th_Q2x8mVn1pL0aZrT5yKe3wB --verify
  $ ratchet replay --all --verify
  $ ratchet replay --tenant acme --verify --json | jq 'select(.divergences | length > 0)'`,
    )
    .action(async (threadId: string | undefined, opts: ReplayOptions, cmd: Command) => {
      process.exitCode = await replay(commandContext(cmd), threadId, opts);
    });
}
