import { Command, type Option } from 'commander';
import { UsageError } from '@ratchet/operator';

/** Every command path of the program (`runs cancel` …) with the words that may follow it. */
export function completionWords(program: Command): Map<string, string[]> {
  const words = new Map<string, string[]>();
  const flags = (options: readonly Option[]) =>
    options.flatMap((o) => [o.long, o.short].filter((f): f is string => !!f));
  const walk = (cmd: Command, path: string[], inherited: string[]) => {
    const own = flags(cmd.options);
    words.set(path.join(' '), [...cmd.commands.map((c) => c.name()), ...own, ...inherited, '--help']);
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()], path.length === 0 ? own : inherited);
  };
  walk(program, [], []);
  return words;
}

/** A bash completion script (zsh loads it with bashcompinit): completes commands, subcommands and options. */
export function bashCompletion(program: Command): string {
  const cases = [...completionWords(program)]
    .sort(([a], [b]) => b.length - a.length)
    .map(([path, words]) => `    "${path}") words="${[...new Set(words)].join(' ')}" ;;`)
    .join('\n');
  return `# ratchet completion (bash; zsh: autoload -U bashcompinit && bashcompinit first)
_ratchet() {
  local cur path="" w i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    case " $(_ratchet_words "\${path:+$path }$w") " in
      "  ") ;;
      *) path="\${path:+$path }$w" ;;
    esac
  done
  COMPREPLY=($(compgen -W "$(_ratchet_words "$path")" -- "$cur"))
}
_ratchet_words() {
  local words=""
  case "$1" in
${cases}
  esac
  echo "$words"
}
complete -F _ratchet ratchet
`;
}

export function completionCommand(program: () => Command): Command {
  return new Command('completion')
    .description('print a shell completion script (bash, or zsh with bashcompinit)')
    .argument('[shell]', 'bash or zsh', 'bash')
    .addHelpText(
      'after',
      `
Examples:
  $ source <(ratchet completion)                         # this shell
  $ ratchet completion > /etc/bash_completion.d/ratchet  # every shell
  $ autoload -U bashcompinit && bashcompinit && source <(ratchet completion zsh)`,
    )
    .action((shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh') throw new UsageError(`no completion for ${shell}: bash or zsh`);
      process.stdout.write(bashCompletion(program()));
    });
}
