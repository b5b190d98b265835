/**
 * What recovery brings back — a revision restored, an entry undropped from the trash —
 * comes into the memory again, so it obeys the caps in force now, like every other way
 * in: a cap lowered since the text was written refuses it (TOO_LARGE), saying which cap
 * and by how much, as a write would. The user's byte and entry caps are edit.ts's
 * checkCaps; the entry and description caps are measured as every way in measures them
 * (caps.ts), and worded here, because recovery cannot shorten what it brings back: its
 * refusal says to copy what is needed instead. The message names no command or route:
 * each door words the `recovered-over-cap` detail.
 */

import { bodyOverCap, descriptionOverCap, type OverCap } from './model/caps.js';
import { EngramError, type ErrorDetail } from './model/errors.js';
import type { Policy } from './model/policy.js';
import { formatCount } from './model/text.js';

/** What brings the text back, and the revision it comes from. */
export interface Recovered {
  readonly operation: 'restore' | 'undrop';
  readonly name: string;
  readonly revision: number;
  readonly description: string;
  readonly body: string;
}

/** Refuses a body over the entry cap or a description over the description cap, as they are now. */
export function checkRecoveredCaps(recovered: Recovered, policy: Policy): void {
  const body = bodyOverCap(recovered.body, policy);
  if (body !== undefined) throw overCap(recovered, 'body', body);
  const description = descriptionOverCap(recovered.description, policy);
  if (description !== undefined) throw overCap(recovered, 'description', description);
}

function overCap(recovered: Recovered, part: 'body' | 'description', { size, cap }: OverCap): EngramError {
  const { operation, name, revision } = recovered;
  const detail: RecoveredOverCap = { reason: 'recovered-over-cap', operation, name, revision, part, size, cap };
  return new EngramError(
    'TOO_LARGE',
    `${recoveredOverCapProblem(detail)}: copy what you need from revision ${revision} (its history shows it) ` +
      `into an entry within the caps; ${nothingDone(detail)}.`,
    detail,
  );
}

type RecoveredOverCap = Extract<ErrorDetail, { reason: 'recovered-over-cap' }>;

/** What was wrong, in the words of a write over the same cap, for every door's message. */
export function recoveredOverCapProblem(detail: RecoveredOverCap): string {
  const { operation, name, revision, part, size, cap } = detail;
  const what =
    part === 'body'
      ? `${name} would be ${formatCount(size)} bytes; the cap is ${formatCount(cap)}.`
      : `The description of ${name} is ${formatCount(size)} characters; the cap is ${formatCount(cap)}.`;
  const whole = operation === 'restore' ? `Revision ${revision} cannot be restored` : `${name} cannot be undropped`;
  return `${what} ${whole} as it is, under the caps in force now`;
}

/** "nothing was restored" or "nothing was undropped". */
export function nothingDone(detail: RecoveredOverCap): string {
  return `nothing was ${detail.operation === 'restore' ? 'restored' : 'undropped'}`;
}
