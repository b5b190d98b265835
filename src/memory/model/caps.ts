/**
 * Whether an entry's body or description is over its cap, measured one way for every way
 * in — a write, an import's plan, a restore, an undrop: a body in UTF-8 bytes against the
 * entry cap, a description in characters against the description cap. Only the measure
 * and the comparison live here; each caller words its own refusal or note.
 */

import type { Policy } from './policy.js';
import { charLength, utf8Bytes } from './text.js';

/** How big a text is, and the cap it is over. */
export interface OverCap {
  readonly size: number;
  readonly cap: number;
}

/** The body's size in bytes and the entry cap when the body is over it; else undefined. */
export function bodyOverCap(body: string, policy: Pick<Policy, 'entryCap'>): OverCap | undefined {
  const size = utf8Bytes(body);
  return size > policy.entryCap ? { size, cap: policy.entryCap } : undefined;
}

/** The description's length in characters and the description cap when it is over it; else undefined. */
export function descriptionOverCap(description: string, policy: Pick<Policy, 'descriptionCap'>): OverCap | undefined {
  const size = charLength(description);
  return size > policy.descriptionCap ? { size, cap: policy.descriptionCap } : undefined;
}
