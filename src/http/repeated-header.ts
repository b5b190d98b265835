/**
 * Headers that decide who may call (Host, Origin, Authorization) are refused when sent
 * twice: Node reads the first copy, and a proxy in front may have acted on another. They
 * are counted in the raw header list, as every request is checked: Node's headersDistinct
 * would build an array for every header of the request first.
 */

import type { IncomingMessage } from 'node:http';

const SINGLE_HEADERS = ['Host', 'Origin', 'Authorization'] as const;
const LOWER_CASE: readonly string[] = SINGLE_HEADERS.map((name) => name.toLowerCase());
const LENGTHS: readonly number[] = SINGLE_HEADERS.map((name) => name.length);

/** The first of Host, Origin and Authorization that the request sends more than once. */
export function repeatedHeader(req: IncomingMessage): (typeof SINGLE_HEADERS)[number] | undefined {
  const counts = [0, 0, 0];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    // Their lengths differ: only a name of one of them is lower-cased and compared.
    const at = LENGTHS.indexOf(name.length);
    if (at !== -1 && name.toLowerCase() === LOWER_CASE[at]) counts[at]!++;
  }
  const first = counts.findIndex((count) => count > 1);
  return first === -1 ? undefined : SINGLE_HEADERS[first];
}
