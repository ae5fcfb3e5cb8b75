/**
 * Time and ids as ports: handlers read them from what the composition root gave them, never from the
 * platform ad hoc, so a test (or a replay) can give them fixed ones.
 */
export interface Clock {
  now(): Date;
}

export interface IdSource {
  /** A new unique id, `<prefix>_<random>`. */
  next(prefix: string): string;
}
