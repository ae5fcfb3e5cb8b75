import type { MemoryErrorCode, MemoryFailureReply } from '@ratchet/contracts';

/** A rule said no: the reply the caller gets, as is. */
export function memoryFailure(
  code: MemoryErrorCode,
  message: string,
  details: { field?: string; limit?: number } = {},
): MemoryFailureReply {
  return { ok: false, error: { code, message, ...details } };
}
