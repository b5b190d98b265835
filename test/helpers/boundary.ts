/**
 * The tag of the entry boundaries in a memory_open answer (`=== end of NAME [TAG] ===`):
 * derived from the answer's content, so tests read it off the answer they check.
 */

import { expect } from 'vitest';

export function boundaryTagOf(text: string): string {
  const tags = [...text.matchAll(/^=== end of \S+ \[([0-9a-f]{12})\] ===$/gm)].map((match) => match[1]);
  const last = tags.at(-1);
  expect(last, `no entry boundary in ${JSON.stringify(text)}`).toBeDefined();
  return last as string;
}
