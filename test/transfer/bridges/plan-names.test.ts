/**
 * A plan names each entry that wants a name already given `-2`, `-3`, … (the first free
 * one), and finding it must not cost more with every entry that wanted the same name:
 * the entry cap bounds how many entries a plan holds (of groups the model can write, and
 * apart of other groups), a cap a team may raise far, and a llama.cpp WebUI export may
 * give every entry the same name. Tried from `-2` each time, the names of n such entries were n²/2 look-ups
 * (20,000 entries: 200 million, some 50 s of one request's CPU). Counted as look-ups of
 * the plan's names, never timed.
 */

import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_POLICY } from '../../../src/memory/model/policy.js';
import { buildPlan, type Draft } from '../../../src/transfer/bridges/plan.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** `count` entries all named `group/note`, each with a body of its own. */
function sameName(group: string, count: number): Draft[] {
  return Array.from({ length: count }, (_, i) => ({
    source: `entry ${i + 1}`,
    group,
    slug: 'note',
    description: 'A note',
    body: `note ${i + 1}\n`,
  }));
}

describe('buildPlan, many entries wanting one name', () => {
  it('names them note, note-2, note-3, … in a number of look-ups that grows with them, not with their square', () => {
    const count = 2_000;
    const drafts = sameName('archive', count);
    const has = vi.spyOn(Map.prototype, 'has');
    const plan = buildPlan('llama-webui', drafts, { ...DEFAULT_POLICY, maxEntries: 10_000 });
    const lookUps = has.mock.calls.length;
    has.mockRestore();
    expect(plan.entries.map((entry) => entry.name)).toEqual(
      Array.from({ length: count }, (_, i) => (i === 0 ? 'archive/note' : `archive/note-${i + 1}`)),
    );
    // Before: 2,001,000 (every name from note-2 up for each entry).
    expect(lookUps).toBeLessThan(10 * count);
  });

  it('still gives each name out once when other entries hold some of the suffixed names already', () => {
    const drafts: Draft[] = [
      { source: 'a', group: 'archive', slug: 'note-3', description: 'Three', body: 'three\n' },
      ...sameName('archive', 4),
      { source: 'b', group: 'archive', slug: 'note-5', description: 'Five', body: 'five\n' },
      ...sameName('archive', 2).map((draft, i) => ({ ...draft, body: `again ${i}\n` })),
    ];
    const names = buildPlan('llama-webui', drafts, DEFAULT_POLICY).entries.map((entry) => entry.name);
    expect(names).toEqual([
      'archive/note-3',
      'archive/note',
      'archive/note-2',
      'archive/note-4',
      'archive/note-5',
      'archive/note-5-2',
      'archive/note-6',
      'archive/note-7',
    ]);
    expect(new Set(names).size).toBe(names.length);
  });
});
