/**
 * One time format in every --json output: ISO 8601 in UTC with milliseconds
 * ("2026-12-06T05:20:00.123Z"), as the export document writes times. Inside Engram a time
 * is milliseconds since 1970 under a key that says it is one (core's types: `at`,
 * `created`, `updated`, `droppedAt`, `purgeAt`, `lastUsed`, `expires`, `used`, a
 * revert's `since` and `until`); every
 * --json output goes through output.ts, which turns them here, so no command prints a
 * number for a time.
 */

/** The keys under which core's types hold a time, in milliseconds since 1970. */
const TIME_KEYS: ReadonlySet<string> = new Set([
  'at',
  'created',
  'updated',
  'droppedAt',
  'purgeAt',
  'lastUsed',
  'expires',
  'used',
  'since',
  'until',
]);

/** A JSON.stringify replacer: a number under a time key becomes its ISO 8601 UTC string. */
export function isoTimes(key: string, value: unknown): unknown {
  return TIME_KEYS.has(key) && typeof value === 'number' && Number.isFinite(value)
    ? new Date(value).toISOString()
    : value;
}
