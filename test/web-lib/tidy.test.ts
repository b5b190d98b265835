// How the index page sorts and narrows entries for tidying (web/src/lib/tidy.ts).
import { describe, expect, it } from 'vitest';
import type { IndexRow } from '../../web/src/lib/api/types';
import { kept, NEAR_CAP, recordsYoung, sorted, unopenedSince } from '../../web/src/lib/tidy';

const NOW = Date.parse('2026-12-06T12:00:00Z');
const DAY = 24 * 60 * 60 * 1000;
const daysAgo = (days: number) => new Date(NOW - days * DAY).toISOString();

function row(name: string, fields: Partial<IndexRow> = {}): IndexRow {
  return {
    name,
    description: `About ${name}`,
    size: 100,
    revision: 1,
    actor: 'Claude',
    created: daysAgo(400),
    updated: daysAgo(200),
    opened: null,
    ...fields,
  };
}

describe('unopenedSince', () => {
  it('is the last open when one was recorded', () => {
    expect(unopenedSince(row('a/x', { opened: daysAgo(3) }), daysAgo(365))).toBe(NOW - 3 * DAY);
  });

  it('counts an entry never opened from the start of the records, or from its creation if later', () => {
    expect(unopenedSince(row('a/x', { created: daysAgo(400) }), daysAgo(100))).toBe(NOW - 100 * DAY);
    expect(unopenedSince(row('a/x', { created: daysAgo(10) }), daysAgo(100))).toBe(NOW - 10 * DAY);
  });
});

describe('recordsYoung', () => {
  it('is true while openings have been recorded for less than 90 days', () => {
    expect(recordsYoung(daysAgo(89), NOW)).toBe(true);
    expect(recordsYoung(daysAgo(90), NOW)).toBe(false);
  });
});

describe('kept', () => {
  const context = { openedSince: daysAgo(365), entryCap: 1000, now: NOW };

  it('keeps every row for all', () => {
    expect(kept(row('a/x'), 'all', context)).toBe(true);
  });

  it('keeps the entries not opened in 90 days, the day itself included', () => {
    expect(kept(row('a/x', { opened: daysAgo(90) }), 'unopened', context)).toBe(true);
    expect(kept(row('a/x', { opened: daysAgo(89) }), 'unopened', context)).toBe(false);
    expect(kept(row('a/x'), 'unopened', context)).toBe(true);
  });

  it('never calls unread an entry from before the records for days Engram did not watch', () => {
    expect(kept(row('a/x'), 'unopened', { ...context, openedSince: daysAgo(30) })).toBe(false);
    expect(kept(row('a/x', { created: daysAgo(5) }), 'unopened', context)).toBe(false);
  });

  it('keeps the entries not changed in 90 days', () => {
    expect(kept(row('a/x', { updated: daysAgo(91) }), 'unchanged', context)).toBe(true);
    expect(kept(row('a/x', { updated: daysAgo(1) }), 'unchanged', context)).toBe(false);
  });

  it('keeps the entries near the entry cap', () => {
    expect(kept(row('a/x', { size: 1000 * NEAR_CAP }), 'near-cap', context)).toBe(true);
    expect(kept(row('a/x', { size: 1000 * NEAR_CAP - 1 }), 'near-cap', context)).toBe(false);
  });
});

describe('sorted', () => {
  const rows = [
    row('a/old', { opened: daysAgo(300), updated: daysAgo(5), size: 10 }),
    row('a/never', { size: 500 }),
    row('a/fresh', { opened: daysAgo(1), updated: daysAgo(50), size: 500 }),
  ];
  const since = daysAgo(200);
  const names = (list: IndexRow[]) => list.map((item) => item.name);

  it('keeps the server name order for name', () => {
    expect(names(sorted(rows, 'name', since))).toEqual(['a/old', 'a/never', 'a/fresh']);
  });

  it('sorts by last change, last open either way, and size, ties by name', () => {
    expect(names(sorted(rows, 'updated', since))).toEqual(['a/old', 'a/fresh', 'a/never']);
    expect(names(sorted(rows, 'opened', since))).toEqual(['a/fresh', 'a/old', 'a/never']);
    expect(names(sorted(rows, 'unopened', since))).toEqual(['a/old', 'a/never', 'a/fresh']);
    expect(names(sorted(rows, 'size', since))).toEqual(['a/fresh', 'a/never', 'a/old']);
  });

  it('returns a new array, the rows given unchanged', () => {
    const given = [...rows];
    sorted(given, 'size', since);
    expect(given).toEqual(rows);
  });
});
