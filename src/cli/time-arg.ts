/**
 * A time given on the command line (`engram revert --since`, `--until`): an ISO 8601 date
 * or date and time (a date alone is midnight UTC; a time without a zone is UTC too), or a
 * span back from now — `90m`, `2h`, `3d`, `1w`. Read by commander, so a bad one is a
 * usage error that says what a time is.
 */

import { InvalidArgumentError } from 'commander';

const SPAN = /^(\d{1,6})(m|h|d|w)$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const ISO = /^\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d{1,3})?)?(?:Z|[+-]\d\d:\d\d)?)?$/;

/** Milliseconds since the epoch of `value`, spans counted back from `now`. */
export function parseTimeArg(value: string, now: number = Date.now()): number {
  const span = SPAN.exec(value.trim());
  if (span) return now - Number(span[1]) * UNIT_MS[span[2] as keyof typeof UNIT_MS];
  const text = value.trim();
  if (ISO.test(text)) {
    const zoned = /(?:Z|[+-]\d\d:\d\d)$/.test(text) || !text.includes(':') ? text : `${text}Z`;
    const at = Date.parse(zoned.replace(' ', 'T'));
    if (Number.isFinite(at) && at >= 0) return at;
  }
  throw new InvalidArgumentError(
    'expected a time: an ISO date or date and time in UTC (2026-12-01, 2026-12-01T09:30, 2026-12-01T09:30:00+01:00), ' +
      'or a span back from now (90m, 2h, 3d, 1w).',
  );
}
