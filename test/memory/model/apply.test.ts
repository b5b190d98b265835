/**
 * Applying a change, the pure rule every store persists: revision numbers, what a drop
 * and an undrop record, how the user's counters move, and which old revisions go.
 */

import { describe, expect, it } from 'vitest';
import { applyChange, applyUndrop, entryAfter, writeRules } from '../../../src/memory/model/apply.js';
import type { Caller } from '../../../src/memory/model/caller.js';
import type { StoredEntry } from '../../../src/memory/port.js';

const ada: Caller = { user: 'ada', label: 'laptop' };
const AT = 1_700_000_000_000;

/** topics/a at revision 4: 8 bytes of name, 1 of description, 4 of body. */
const current: StoredEntry = {
  name: 'topics/a',
  description: 'A',
  body: 'old\n',
  size: 4,
  created: AT - 9_000,
  updated: AT - 1_000,
  revision: 4,
};

const base = { name: 'topics/a', caller: ada, at: AT, historyLimit: 100 };

describe('applyChange', () => {
  it('creates: revision 1, created and updated now, one more entry, the revision recorded', () => {
    const applied = applyChange({
      ...base,
      current: undefined,
      change: { kind: 'put', operation: 'create', description: 'Ä', body: 'hé\n' },
    });

    const entry = { name: 'topics/a', description: 'Ä', body: 'hé\n', size: 4, created: AT, updated: AT, revision: 1 };
    expect(applied).toEqual({
      kind: 'write',
      entry,
      record: { revision: 1, operation: 'create', actor: 'laptop', at: AT, description: 'Ä', body: 'hé\n' },
      usage: { totalBytes: 8 + 2 + 4, entries: 1, historyBytes: 2 + 4 },
      trimThrough: 0,
    });
    expect(entryAfter(undefined, applied)).toEqual(entry);
  });

  it('updates: the next revision, created kept, counters moved by the difference', () => {
    const applied = applyChange({
      ...base,
      current,
      change: { kind: 'put', operation: 'append', description: 'A', body: 'old\nnew\n' },
    });

    expect(applied).toMatchObject({
      kind: 'write',
      entry: { revision: 5, created: AT - 9_000, updated: AT, size: 8 },
      record: { revision: 5, operation: 'append', actor: 'laptop', at: AT, body: 'old\nnew\n' },
      usage: { totalBytes: 4, entries: 0, historyBytes: 1 + 8 },
    });
  });

  it('drops: the next revision records the text the entry had, by whom and when; the entry leaves the counts', () => {
    const applied = applyChange({ ...base, current, change: { kind: 'drop' } });

    expect(applied).toEqual({
      kind: 'drop',
      entry: { ...current, revision: 5 },
      record: { revision: 5, operation: 'drop', actor: 'laptop', at: AT, description: 'A', body: 'old\n' },
      usage: { totalBytes: -(8 + 1 + 4), entries: -1, historyBytes: 1 + 4 },
      trimThrough: 0,
    });
    expect(entryAfter(current, applied)).toBeUndefined();
  });

  it('persists nothing for none, or for a drop of nothing', () => {
    expect(applyChange({ ...base, current, change: { kind: 'none' } })).toBeUndefined();
    expect(applyChange({ ...base, current: undefined, change: { kind: 'drop' } })).toBeUndefined();
    expect(entryAfter(current, undefined)).toBe(current);
  });

  it('trims the revisions past historyLimit: revision N keeps N - limit + 1 to N', () => {
    const change = { kind: 'put', operation: 'replace', description: 'A', body: 'x\n' } as const;
    expect(applyChange({ ...base, current, change, historyLimit: 2 })?.trimThrough).toBe(3);
    expect(applyChange({ ...base, current, change, historyLimit: 5 })?.trimThrough).toBe(0);
    expect(applyChange({ ...base, current, change: { kind: 'drop' }, historyLimit: 1 })?.trimThrough).toBe(4);
  });
});

describe('applyChange: the text an append added (appended)', () => {
  const appendedBy = (
    before: StoredEntry,
    change: { operation: 'append' | 'replace'; description: string; body: string },
  ) => applyChange({ ...base, current: before, change: { kind: 'put', ...change }, withAppended: true })?.appended;

  it('is the text after the old body, its line break first when the old body lacked one', () => {
    expect(appendedBy(current, { operation: 'append', description: 'A', body: 'old\nnew\n' })).toBe('new\n');
    const unended = { ...current, body: 'old' };
    expect(appendedBy(unended, { operation: 'append', description: 'A', body: 'old\nnew\n' })).toBe('\nnew\n');
    const empty = { ...current, body: '' };
    expect(appendedBy(empty, { operation: 'append', description: 'A', body: 'new\n' })).toBe('new\n');
  });

  it('is left out when the write did more than add lines: a new description, another operation, no line break at the join, a new entry', () => {
    expect(appendedBy(current, { operation: 'append', description: 'B', body: 'old\nnew\n' })).toBeUndefined();
    expect(appendedBy(current, { operation: 'replace', description: 'A', body: 'old\nnew\n' })).toBeUndefined();
    const unended = { ...current, body: 'old' };
    expect(appendedBy(unended, { operation: 'append', description: 'A', body: 'older\n' })).toBeUndefined();
    expect(appendedBy(current, { operation: 'append', description: 'A', body: 'new\nold\n' })).toBeUndefined();
    const created = applyChange({
      ...base,
      current: undefined,
      change: { kind: 'put', operation: 'create', description: 'A', body: 'new\n' },
      withAppended: true,
    });
    expect(created).not.toHaveProperty('appended');
  });

  it('is not worked out unless asked for: only a store whose save reads it pays the comparison', () => {
    const append = { kind: 'put', operation: 'append', description: 'A', body: 'old\nnew\n' } as const;
    expect(applyChange({ ...base, current, change: append })).not.toHaveProperty('appended');
    expect(applyChange({ ...base, current, change: append, withAppended: false })).not.toHaveProperty('appended');
  });
});

describe('applyUndrop', () => {
  it('brings the dropped copy back at the next revision, counted again, its times kept', () => {
    const dropped = { ...current, revision: 5 };

    expect(applyUndrop(dropped, ada, AT, 3)).toEqual({
      kind: 'undrop',
      entry: { ...current, revision: 6 },
      record: { revision: 6, operation: 'undrop', actor: 'laptop', at: AT, description: 'A', body: 'old\n' },
      usage: { totalBytes: 8 + 1 + 4, entries: 1, historyBytes: 1 + 4 },
      trimThrough: 3,
    });
  });
});

describe('writeRules', () => {
  it("carries the policy's history limits and the clock, nothing else", () => {
    const now = () => AT;
    expect(writeRules({ historyLimit: 7, historyCap: 1_000 }, now)).toEqual({
      now,
      historyLimit: 7,
      historyCap: 1_000,
    });
  });
});
