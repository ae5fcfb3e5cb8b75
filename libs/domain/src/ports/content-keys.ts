import { RatchetError, type Retry } from './errors';

/**
 * Content at rest (docs/security.md#content-at-rest, ADR 0034): the content of a thread's log — messages,
 * tool arguments and results, outputs — is sealed with a data key of its own thread, held outside the
 * log. Destroying the key (erasing the thread or its subject) leaves every copy of the log — old stream
 * messages, exports, backups of the log — with its shape and without its content.
 */

/** A thread's data key: its id (`kid`, written beside every ciphertext) and its 32 bytes (AES-256-GCM). */
export interface DataKey {
  kid: string;
  key: Uint8Array;
}

/**
 * Why a key id does not open: the deployment holds no such key (it was destroyed by an erasure, which
 * keeps nothing of it, or it never was here), or no master key is configured in this process.
 */
export type KeyAbsence = 'unknown' | 'unconfigured';

/**
 * The keys of threads' content (the default adapter keeps them wrapped by a master key, in Postgres). A
 * key is destroyed with its thread's rows, in the erasure's own transaction, and nothing of it is kept.
 */
export interface ContentKeys {
  /** Whether keys can be made and opened here (a master key is configured). */
  readonly configured: boolean;
  /**
   * The data key a thread's content is sealed with, made on first use; `subject` is who the thread is of.
   * `fresh`: not from a cache (a thread that starts again after an erasure gets a key of its own).
   */
  forThread(tenantId: string, threadId: string, subject: string, fresh?: boolean): Promise<DataKey>;
  /** The keys with these ids; an id that cannot be opened maps to why. */
  byIds(kids: readonly string[]): Promise<Map<string, DataKey | KeyAbsence>>;
}

/** Wraps data keys under a master key (a key file, or a KMS): the master key never leaves it. */
export interface KeyWrapper {
  /** The id of the master key new keys are wrapped with. */
  readonly currentId: string;
  wrap(key: Uint8Array): Promise<string>;
  unwrap(wrapped: string): Promise<Uint8Array>;
  /** Whether this wrapped key is under the current master key (a rewrap moves it there). */
  isCurrent(wrapped: string): boolean;
}

/**
 * Sealed content could not be opened: its key is not held here (destroyed when its thread was erased,
 * or never here), or no master key is configured here. Retrying does not change that.
 */
export class ContentSealedError extends RatchetError {
  readonly code = 'content.sealed';
  readonly retry: Retry = 'never';
  constructor(
    readonly kid: string,
    readonly absence: KeyAbsence,
    where: string,
  ) {
    super(`${where}: its content is sealed with key ${kid}, which is ${describeAbsence(absence)}`);
  }
}

export function describeAbsence(absence: KeyAbsence): string {
  switch (absence) {
    case 'unknown':
      return 'not held by this deployment (destroyed when its thread was erased, or never here)';
    case 'unconfigured':
      return 'not readable here: no master key is configured (RATCHET_KEY_FILE)';
  }
}
