import { writeFileSync } from 'node:fs';
import {
  FileKeyWrapper,
  KeyFileError,
  PgContentKeys,
  newMasterKey,
  readKeyFile,
  writeKeyFile,
  type KeyFileContent,
} from '@ratchet/adapters';
import { withSchema, type CommandContext } from '../context';
import { CliError, UsageError } from '../errors';

/**
 * The master key file that wraps the threads' data keys (docs/security.md#content-at-rest): made once,
 * rotated by putting a new key first (`rotate`), moving every data key under it (`rewrap`) and then
 * taking the old one out (`retire`), which refuses while any data key is still wrapped with it.
 */

export interface MasterKeyFileOptions {
  file?: string;
  id?: string;
}

function fileOf(ctx: CommandContext, opts: MasterKeyFileOptions): string {
  const file = opts.file ?? ctx.config.RATCHET_KEY_FILE;
  if (file === undefined) throw new UsageError('give --file <path> (or set RATCHET_KEY_FILE)');
  return file;
}

const defaultId = () => `m${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`;

function asCliError(error: unknown): never {
  if (error instanceof KeyFileError) throw new CliError(error.message, undefined, error.code, { cause: error });
  if ((error as { code?: unknown }).code === 'EEXIST') {
    throw new CliError(
      `${(error as { path?: string }).path ?? 'the key file'} exists already: use \`rotate\``,
      undefined,
      'keys.file_exists',
    );
  }
  throw error;
}

export function initMasterKey(ctx: CommandContext, opts: MasterKeyFileOptions): void {
  const file = fileOf(ctx, opts);
  const id = opts.id ?? defaultId();
  try {
    writeKeyFile(file, newMasterKey(id));
  } catch (error) {
    asCliError(error);
  }
  if (ctx.out.json) ctx.out.jsonLine({ file, current: id });
  else ctx.out.line(`wrote ${file} (master key ${id}, mode 0600): set RATCHET_KEY_FILE=${file} for every service`);
}

export function rotateMasterKey(ctx: CommandContext, opts: MasterKeyFileOptions): void {
  const file = fileOf(ctx, opts);
  const id = opts.id ?? defaultId();
  try {
    writeKeyFile(file, newMasterKey(id), readKeyFile(file));
  } catch (error) {
    asCliError(error);
  }
  if (ctx.out.json) ctx.out.jsonLine({ file, current: id });
  else {
    ctx.out.line(`${file}: new master key ${id} first; the older ones still unwrap`);
    ctx.out.note('roll it out to every service, then run `ratchet master-key rewrap`');
  }
}

/** Wraps every live data key under the key file's first master key. */
export async function rewrapDataKeys(ctx: CommandContext, opts: MasterKeyFileOptions): Promise<void> {
  const file = fileOf(ctx, opts);
  let wrapper: FileKeyWrapper;
  try {
    wrapper = FileKeyWrapper.fromFile(file);
  } catch (error) {
    asCliError(error);
  }
  const result = await withSchema(ctx.config, 'orchestrator', (db) => new PgContentKeys(db.sql, wrapper).rewrap());
  if (ctx.out.json) ctx.out.jsonLine({ current: wrapper.currentId, ...result });
  else ctx.out.line(`${result.moved} of ${result.live} data keys rewrapped under ${wrapper.currentId}`);
}

/** Takes a master key out of the file once no data key is wrapped with it. */
export async function retireMasterKey(ctx: CommandContext, opts: MasterKeyFileOptions): Promise<void> {
  const file = fileOf(ctx, opts);
  if (opts.id === undefined) throw new UsageError('give --id <master key id> to retire');
  const id = opts.id;
  let content: KeyFileContent;
  try {
    content = readKeyFile(file);
  } catch (error) {
    asCliError(error);
  }
  if (!content.keys.some((k) => k.id === id)) throw new UsageError(`${file} holds no master key '${id}'`);
  if (content.keys[0]!.id === id) throw new UsageError(`'${id}' is the current master key: rotate first`);
  const [row] = await withSchema(ctx.config, 'orchestrator', (db) =>
    db.sql.query<{ n: number }>(`select count(*)::int as n from ${db.sql.table('thread_keys')} where wrapped like ?`, [
      `${id}:%`,
    ]),
  );
  if ((row?.n ?? 0) > 0) {
    throw new CliError(
      `${row!.n} data keys are still wrapped with '${id}': run \`ratchet master-key rewrap\` first`,
      undefined,
      'keys.in_use',
    );
  }
  const kept: KeyFileContent = { keys: content.keys.filter((k) => k.id !== id) };
  writeFileSync(file, `${JSON.stringify(kept, null, 2)}\n`, { mode: 0o600 });
  if (ctx.out.json) ctx.out.jsonLine({ file, retired: id });
  else
    ctx.out.line(
      `${file}: master key ${id} retired (backups taken before the rewrap can no longer be opened with this file)`,
    );
}
