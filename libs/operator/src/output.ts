import { styleText } from 'node:util';
import type { Style, Styler } from './timeline/format-timeline';

/** Where a command writes: stdout for results, stderr for progress and errors. Injectable for tests. */
export interface Output {
  readonly json: boolean;
  /** Applies a colour only when stdout is a terminal (and NO_COLOR is unset). */
  readonly style: Styler;
  /** One result line on stdout. */
  line(text: string): void;
  /** One JSON value as a line on stdout. */
  jsonLine(value: unknown): void;
  /** Progress or notes for a human, on stderr; silent in --json mode. */
  note(text: string): void;
}

export function colourEnabled(
  stream: NodeJS.WriteStream = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false;
  if (env['TERM'] === 'dumb') return false;
  return stream.isTTY === true;
}

export function processOutput(json: boolean): Output {
  const colour = !json && colourEnabled();
  const style: Styler = colour ? (s: Style, text: string) => styleText(s, text) : (_s, text) => text;
  return {
    json,
    style,
    line: (text) => process.stdout.write(`${text}\n`),
    jsonLine: (value) => process.stdout.write(`${JSON.stringify(value)}\n`),
    note: (text) => {
      if (!json) process.stderr.write(`${text}\n`);
    },
  };
}
