import type { Output } from './output';

export interface Progress {
  /** `done` of `total` finished; `label` says what is being worked on. */
  update(done: number, label?: string): void;
  finish(): void;
}

const WIDTH = 24;

/**
 * A self-updating bar on stderr, only when stderr is a terminal and output is for a human: a pipe or
 * `--json` gets nothing (the result lines on stdout say what happened).
 */
export function progressBar(out: Output, what: string, total: number, stream = process.stderr): Progress {
  if (out.json || !stream.isTTY || total <= 1) return { update: () => undefined, finish: () => undefined };
  let drawn = false;
  return {
    update(done, label) {
      const filled = Math.round((WIDTH * done) / Math.max(1, total));
      const bar = '█'.repeat(filled) + '░'.repeat(WIDTH - filled);
      stream.write(`\r\x1b[K${what} ${bar} ${done}/${total}${label ? out.style('dim', ` ${label}`) : ''}`);
      drawn = true;
    },
    finish() {
      if (drawn) stream.write('\r\x1b[K');
    },
  };
}
