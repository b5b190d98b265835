/**
 * How the index page sorts and narrows the entries when a person tidies the memory: by
 * last change, last open or size against the entry cap, and the entries nobody opened in
 * 90 days. An entry's last open is known only since Engram began recording opens
 * (`openedSince`): an entry never opened counts from then, or from its creation if later,
 * so no entry is called unread for days Engram did not watch.
 */

import type { IndexRow } from './api/types';

export type Sort = 'name' | 'updated' | 'opened' | 'unopened' | 'size';
export type Show = 'all' | 'unopened' | 'unchanged' | 'near-cap';

/** The days after which an entry nobody opened or changed is offered for tidying. */
export const STALE_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;
/** An entry at this share of the entry cap or more is near it. */
export const NEAR_CAP = 0.8;

/** When the entry was last opened, or since when it has not been (ms): its creation or the start of the records, the later. */
export function unopenedSince(row: IndexRow, openedSince: string): number {
  if (row.opened !== null) return Date.parse(row.opened);
  return Math.max(Date.parse(row.created), Date.parse(openedSince));
}

/** Whether Engram began recording openings less than STALE_DAYS before `now`: "not opened" then counts from that day. */
export function recordsYoung(openedSince: string, now: number): boolean {
  return now - Date.parse(openedSince) < STALE_DAYS * DAY_MS;
}

/** Whether the row is one `show` keeps, at `now`. */
export function kept(
  row: IndexRow,
  show: Show,
  context: { openedSince: string; entryCap: number; now: number },
): boolean {
  const stale = context.now - STALE_DAYS * DAY_MS;
  switch (show) {
    case 'unopened':
      return unopenedSince(row, context.openedSince) <= stale;
    case 'unchanged':
      return Date.parse(row.updated) <= stale;
    case 'near-cap':
      return row.size >= context.entryCap * NEAR_CAP;
    default:
      return true;
  }
}

/** The rows in `sort`'s order (a new array; name order is the server's, kept as given). */
export function sorted(rows: readonly IndexRow[], sort: Sort, openedSince: string): IndexRow[] {
  const opened = (row: IndexRow) => unopenedSince(row, openedSince);
  const byName = (a: IndexRow, b: IndexRow) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  switch (sort) {
    case 'updated':
      return rows.toSorted((a, b) => Date.parse(b.updated) - Date.parse(a.updated) || byName(a, b));
    case 'opened':
      // Opened ones by their last open, newest first; then those never opened, the newest first.
      return rows.toSorted(
        (a, b) => Number(a.opened === null) - Number(b.opened === null) || opened(b) - opened(a) || byName(a, b),
      );
    case 'unopened':
      return rows.toSorted((a, b) => opened(a) - opened(b) || byName(a, b));
    case 'size':
      return rows.toSorted((a, b) => b.size - a.size || byName(a, b));
    default:
      return [...rows];
  }
}
