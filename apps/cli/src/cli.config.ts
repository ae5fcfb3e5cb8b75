import { Option } from 'commander';
import { GLOBAL_ENV_OPTIONS, SERVICE_NAMES } from '@ratchet/operator';

export function globalOptions(): Option[] {
  return [
    new Option('--json', 'print JSON (event lists: one event per line)'),
    ...GLOBAL_ENV_OPTIONS.map((o) => new Option(o.flags, `${o.help} (instead of $${o.variable})`)),
  ];
}

export function serviceOption(): Option {
  return new Option('--service <name>', 'only this service schema').choices(SERVICE_NAMES);
}
