/**
 * Errors that a caller can act on. Every refusal in Engram is an EngramError with a
 * stable code (for programs) and a message written for whoever must fix the call —
 * usually a model, so the message says what was wrong and exactly how to call again.
 */

export type ErrorCode =
  | 'INVALID_ARGUMENT'
  | 'INVALID_NAME'
  | 'READ_ONLY_GROUP'
  | 'READ_ONLY_TOKEN'
  | 'NOT_FOUND'
  | 'NO_MATCH'
  | 'AMBIGUOUS'
  | 'TOO_LARGE'
  | 'NOTHING_TO_DO'
  | 'CONFLICT'
  | 'UNAUTHORIZED'
  | 'UNKNOWN_TOOL'
  | 'INVALID_CONFIG'
  /** The user's entry count cap is reached. */
  | 'TOO_MANY_ENTRIES'
  /** The server is already doing this kind of work for the user (an import): try again shortly. */
  | 'BUSY'
  /** Another process held the database's write lock past the deadline: try again shortly. */
  | 'STORE_BUSY'
  /** The database file or its folder cannot be written (permissions, read-only file system). */
  | 'STORE_READ_ONLY'
  /** The disk (or the database's quota) is full. */
  | 'STORE_FULL'
  /** The database file was removed or replaced while open: writes would be lost at the next start. */
  | 'STORE_REPLACED'
  /** The database cannot be reached or read (server down, corrupt file, lost connection). */
  | 'STORE_UNAVAILABLE';

export class EngramError extends Error {
  override readonly name = 'EngramError';
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function isEngramError(value: unknown): value is EngramError {
  return value instanceof EngramError;
}
