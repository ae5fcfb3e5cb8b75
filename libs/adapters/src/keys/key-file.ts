import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import type { KeyWrapper } from '@ratchet/domain';

/**
 * The default master key: a file outside the database and the streams (`RATCHET_KEY_FILE`, mode 0600; in
 * Kubernetes a Secret mounted as a file), that wraps the threads' data keys. It lists master keys newest
 * first: the first wraps new keys, the others still unwrap the keys wrapped before a rotation
 * (docs/security.md#rotating-keys), until `ratchet keys rewrap` has moved every key to the first.
 */

const KeyFileSchema = z.object({
  keys: z
    .array(
      z.object({
        id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'an id of letters, digits, dot, dash or underscore'),
        key: z
          .string()
          .refine((k) => Buffer.from(k, 'base64').length === 32, 'the base64 of 32 random bytes (AES-256)'),
      }),
    )
    .min(1, 'at least one master key'),
});
export type KeyFileContent = z.infer<typeof KeyFileSchema>;

/** The key file cannot be used: it is missing, unreadable, or not a key file. Fix the file and restart. */
export class KeyFileError extends Error {
  readonly code = 'keys.file_invalid';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KeyFileError';
  }
}

export class FileKeyWrapper implements KeyWrapper {
  private readonly keys: Map<string, Buffer>;
  readonly currentId: string;

  constructor(content: KeyFileContent) {
    this.keys = new Map(content.keys.map((k) => [k.id, Buffer.from(k.key, 'base64')]));
    this.currentId = content.keys[0]!.id;
  }

  static fromFile(path: string): FileKeyWrapper {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new KeyFileError(`cannot read the key file ${path}: ${(error as Error).message}`, { cause: error });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new KeyFileError(`${path} is not a key file: not JSON (make one with \`ratchet keys init\`)`);
    }
    const parsed = KeyFileSchema.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      throw new KeyFileError(`${path} is not a valid key file: ${issues}`);
    }
    return new FileKeyWrapper(parsed.data);
  }

  async wrap(key: Uint8Array): Promise<string> {
    const master = this.keys.get(this.currentId)!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', master, iv);
    cipher.setAAD(Buffer.from(this.currentId));
    const ct = Buffer.concat([cipher.update(key), cipher.final(), cipher.getAuthTag()]);
    return `${this.currentId}:${iv.toString('base64')}:${ct.toString('base64')}`;
  }

  async unwrap(wrapped: string): Promise<Uint8Array> {
    const [id, iv, ct] = wrapped.split(':');
    const master = id === undefined ? undefined : this.keys.get(id);
    if (!master || iv === undefined || ct === undefined) {
      throw new KeyFileError(`a data key is wrapped with master key '${id}', which the key file does not hold`);
    }
    const bytes = Buffer.from(ct, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', master, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(id!));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]);
  }

  isCurrent(wrapped: string): boolean {
    return wrapped.startsWith(`${this.currentId}:`);
  }
}

/** A new master key entry: `id` and 32 random bytes. */
export function newMasterKey(id: string): KeyFileContent['keys'][number] {
  return { id, key: randomBytes(32).toString('base64') };
}

/**
 * Writes a key file with `entry` first (a new file, or a rotation: the old keys stay after it), mode 0600.
 * Refuses an id the file holds already.
 */
export function writeKeyFile(path: string, entry: KeyFileContent['keys'][number], existing?: KeyFileContent): void {
  if (existing?.keys.some((k) => k.id === entry.id)) {
    throw new KeyFileError(`${path} already holds a master key '${entry.id}': choose another id`);
  }
  const content: KeyFileContent = { keys: [entry, ...(existing?.keys ?? [])] };
  writeFileSync(path, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600, flag: existing ? 'w' : 'wx' });
  chmodSync(path, 0o600);
}

export function readKeyFile(path: string): KeyFileContent {
  FileKeyWrapper.fromFile(path);
  return KeyFileSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
}

/** The master key of a deployment from its key file (`RATCHET_KEY_FILE`); none when it is not set. */
export function masterKeyFromFile(path: string | undefined): FileKeyWrapper | undefined {
  return path === undefined || path === '' ? undefined : FileKeyWrapper.fromFile(path);
}
