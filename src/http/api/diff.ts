/**
 * `GET /api/entries/{group}/{slug}/diff?from=N&to=M`: what changed between two revisions
 * of an entry (the description and the body), as a unified diff — the web UI's history
 * view shows it, and a script can read it as `engram diff` prints it. Two revisions too
 * different to diff at a bounded cost are answered with a flag and both of them (their
 * sizes, line counts and texts), for the reader to compare.
 */

import type { Memory } from '../../memory/memory.js';
import { EngramError } from '../../memory/model/errors.js';
import type { Route } from './route.js';
import { type DiffJson, diffSideJson } from './shapes.js';

/** The revision number `?key=` gives (null: absent), a whole number from 1 up; INVALID_ARGUMENT otherwise. */
function revisionNumber(key: string, value: string | null): number {
  if (value === null || !/^[1-9][0-9]{0,14}$/.test(value)) {
    const got = value === null ? `?${key} is missing` : `?${key}=${value} is not understood`;
    throw new EngramError(
      'INVALID_ARGUMENT',
      `${got}: give ?from=N (and ?to=M, the latest when left out), revision numbers from GET /api/entries/{group}/{slug}/history.`,
    );
  }
  return Number(value);
}

export function diffRoutes(memory: Memory): Route[] {
  return [
    {
      method: 'GET',
      template: '/api/entries/{group}/{slug}/diff',
      query: ['from', 'to'],
      handle: async ({ caller, name, query }) => {
        const from = revisionNumber('from', query.get('from'));
        const to = query.get('to') === null ? undefined : revisionNumber('to', query.get('to'));
        const diff = await memory.recovery.diff(caller, name, from, to);
        const answer: DiffJson =
          diff.patch !== null
            ? { diff: diff.patch, tooDifferent: false }
            : { diff: null, tooDifferent: true, from: diffSideJson(diff.from), to: diffSideJson(diff.to) };
        return { body: answer };
      },
    },
  ];
}
