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
