/**
 * The shape of a front door's wording of refusals, checked whole by the compiler. Core words
 * a refusal for the model; a door whose reader calls otherwise (the command line's flags, the
 * REST API's routes) words it again from its detail. Each such door keeps one table with an
 * entry for every ErrorCode and every ErrorDetail reason, so that a new code or reason does
 * not build until each door has decided how its reader is told, as STATUS_BY_CODE does for
 * the HTTP status. An entry either words the refusal from its detail in the door's voice, or
 * says in so many words that core's message stands; there is no default, which would let a
 * new refusal reach a person in the model's words unnoticed.
 */

import type { EngramError, ErrorCode, ErrorDetail } from './errors.js';

/** Core's message is right for this door's reader as it is (the entry's comment says why). */
export const CORE_MESSAGE = 'core message';
/** This door never makes the call refused so (the entry's comment says why); core's message, should it ever. */
export const NEVER_HERE = 'never here';

type Kept = typeof CORE_MESSAGE | typeof NEVER_HERE;

type DetailOf<Reason extends ErrorDetail['reason']> = Extract<ErrorDetail, { readonly reason: Reason }>;

export interface DoorWording {
  /**
   * A refusal without detail, by its code: core's message, whether this door meets it or
   * not. Core gives a detail to the refusals that tell their reader how to call again; a
   * new code's refusals that do need one, with a reason every door words or keeps.
   */
  readonly byCode: { readonly [Code in ErrorCode]: Kept };
  /** A refusal with detail, by its reason: in the door's words, or core's kept. */
  readonly byReason: {
    readonly [Reason in ErrorDetail['reason']]: Kept | ((detail: DetailOf<Reason>) => string);
  };
}

/** The message a door shows for `error`: its entry's words, or core's message where the entry keeps it. */
export function wordedBy(door: DoorWording, error: EngramError): string {
  const { detail } = error;
  const entry = detail === undefined ? door.byCode[error.code] : door.byReason[detail.reason];
  if (typeof entry === 'string') return error.message;
  // Only a reason's entry words, and the entry of this detail's reason takes this detail: a
  // pairing the compiler does not follow through the lookup.
  return (entry as (detail: ErrorDetail | undefined) => string)(detail);
}
