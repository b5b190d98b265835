/**
 * Reading what a REST request says: flags and choices in its query, its JSON body, and
 * the entry name in its path. Anything unreadable is an INVALID_ARGUMENT that says how to
 * write it instead.
 */

import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../json/json-nesting.js';
import { EngramError } from '../../memory/model/errors.js';

/** `?key=1` (or `true`) is on, `?key=0` (or `false`) or no key is off. */
export function flag(query: URLSearchParams, key: string): boolean {
  const value = query.get(key);
  if (value === null || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw new EngramError('INVALID_ARGUMENT', `?${key}=${value} is not understood: use ?${key}=1, or leave it out.`);
}

/** One of `choices`, or the first of them when the key is absent. */
export function choice<T extends string>(query: URLSearchParams, key: string, choices: readonly [T, ...T[]]): T {
  const value = query.get(key);
  if (value === null) return choices[0];
  const found = choices.find((item) => item === value);
  if (found === undefined) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `?${key}=${value} is not understood: use ${choices.map((item) => `?${key}=${item}`).join(' or ')}.`,
    );
  }
  return found;
}

/** Refuses query parameters the route does not take, and any given twice. */
export function checkQuery(query: URLSearchParams, allowed: readonly string[], route: string): void {
  for (const key of new Set(query.keys())) {
    if (!allowed.includes(key)) {
      const takes = allowed.length > 0 ? `it takes ${allowed.map((item) => `?${item}`).join(', ')}` : 'it takes none';
      throw new EngramError('INVALID_ARGUMENT', `?${key} is not a parameter of ${route}: ${takes}.`);
    }
    if (query.getAll(key).length > 1) {
      throw new EngramError('INVALID_ARGUMENT', `?${key} is given more than once; give it once.`);
    }
  }
}

export function jsonBody(text: string, example: string): unknown {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `the request body is JSON nested more than ${MAX_JSON_DEPTH} levels deep: send ${example}.`,
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new EngramError('INVALID_ARGUMENT', `the request body is not valid JSON: send ${example}.`);
  }
}

/** Path segments are percent-decoded; one that cannot be is kept as sent, and the name check refuses it. */
export function pathSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
