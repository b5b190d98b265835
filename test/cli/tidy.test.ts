/**
 * `engram duplicates` and `engram merge` in process on a temporary database: the pairs
 * with their scores, reasons and both entries; --json for scripts; a merge that prints
 * its id and how to undo it, undone by `engram revert --undo`; and the refusals — a bad
 * --limit, the same entry, a missing one, the entry cap, a revision that moved — in the
 * command line's words, none of them changing anything.
 */

import { describe, expect, it } from 'vitest';
import { cliMessage } from '../../src/cli/wording.js';
import { createMemory } from '../../src/memory/memory.js';
import { EngramError } from '../../src/memory/model/errors.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { type Cli, cli, expectRefused, expectUsageError, ok } from './fixtures.js';

async function withCopies(): Promise<Cli> {
  const engram = cli();
  await ok(engram.run('write', 'topics/coffee', '-d', 'Coffee preferences', '--new', 'Flat white.'));
  await ok(engram.run('write', 'people/barista', '-d', 'Coffee preference', '--new', 'Oat milk.'));
  await ok(engram.run('write', 'areas/garden', '-d', 'Garden', '--new', 'Tomatoes.'));
  return engram;
}

describe('engram duplicates', () => {
  it('lists each pair with its score, reasons, both entries and each field’s similarity', async () => {
    const engram = await withCopies();
    const text = await ok(engram.run('duplicates'));
    expect(text.trimEnd().split('\n')).toEqual([
      '1 possible duplicate among 3 entries, closest first:',
      expect.stringMatching(/^0\.\d\d {2}close description$/),
      '      people/barista  Coffee preference  (10 bytes)',
      '      topics/coffee   Coffee preferences  (12 bytes)',
      expect.stringMatching(/^ {6}similarity: name 0\.\d\d, description 0\.91, body 0\.00$/),
      'Merge one into the other with: engram merge FROM INTO (FROM goes to the trash).',
    ]);
    const json = JSON.parse(await ok(engram.run('duplicates', '--json', '--limit', '5')));
    expect(json).toMatchObject({ examined: 3, truncated: false });
    expect(json.pairs[0]).toMatchObject({
      a: { name: 'people/barista', revision: 1, updated: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      b: { name: 'topics/coffee', revision: 1 },
      reasons: ['description'],
      similarity: { description: 0.91, body: 0 },
    });
  });

  it('says when there is none, and refuses a --limit out of 1 to 200', async () => {
    const engram = cli();
    await ok(engram.run('write', 'topics/a', '-d', 'One thing', '--new', 'x'));
    expect(await ok(engram.run('duplicates'))).toBe('No possible duplicates among 1 entry.\n');
    for (const limit of ['0', '201', 'ten']) {
      await expectUsageError(engram, ['duplicates', '--limit', limit], /expected a whole number from 1 to 200/);
    }
  });
});

describe('engram merge', () => {
  it('merges, prints the id and how to undo; engram revert --undo brings both back', async () => {
    const engram = await withCopies();
    const before = await ok(engram.run('open', 'topics/coffee', 'people/barista'));
    const text = await ok(engram.run('merge', 'people/barista', 'topics/coffee'));
    const id = /as merge (\S+):/.exec(text)?.[1] ?? '';
    expect(text.trimEnd().split('\n')).toEqual([
      `Merged people/barista into topics/coffee as merge ${id}: topics/coffee holds its description and body under ` +
        '"## Merged from people/barista", and people/barista is in the trash.',
      `Undo it with: engram revert --undo ${id}`,
    ]);
    expect(await ok(engram.run('open', 'topics/coffee'))).toContain(
      'Flat white.\n\n## Merged from people/barista\n\nCoffee preference\n\nOat milk.\n',
    );
    expect((await engram.run('open', 'people/barista')).code).toBe(1);
    expect(await ok(engram.run('history', 'topics/coffee'))).toContain(
      `merge ${id}: people/barista into topics/coffee`,
    );

    const undone = await ok(engram.run('revert', '--undo', id));
    expect(undone).toMatch(/^Reverted 2 entries as revert \S+:$/m);
    expect(await ok(engram.run('open', 'topics/coffee', 'people/barista'))).toBe(before);
  });

  it('gives scripts the result with --json', async () => {
    const engram = await withCopies();
    const json = JSON.parse(await ok(engram.run('merge', 'PEOPLE/barista', 'topics/coffee', '--json')));
    expect(json).toEqual({
      id: expect.any(String),
      note: `merge ${json.id}: people/barista into topics/coffee`,
      into: 'topics/coffee',
      dropped: 'people/barista',
    });
  });

  it('refuses the same entry, a missing one and a merged body over the entry cap, changing nothing', async () => {
    const engram = await withCopies();
    await expectRefused(
      engram,
      ['merge', 'topics/coffee', 'topics/coffee'],
      'topics/coffee cannot be merged into itself: choose two entries.',
    );
    await expectRefused(
      engram,
      ['merge', 'topics/tea', 'topics/coffee'],
      'topics/tea is not in this memory: nothing was merged. engram duplicates lists the pairs as they are now.',
    );
    await expectRefused(
      engram,
      ['merge', 'topics/coffee', 'topics/nothing'],
      'topics/nothing is not in this memory: nothing was merged. engram duplicates lists the pairs as they are now.',
    );
    await ok(engram.run('write', 'topics/long', '-d', 'Long', '--new', 'a'.repeat(9_000)));
    await ok(engram.run('write', 'topics/longer', '-d', 'Longer', '--new', 'b'.repeat(9_000)));
    await expectRefused(
      engram,
      ['merge', 'topics/long', 'topics/longer'],
      'topics/longer would be 18,037 bytes with topics/long merged in, 1,653 over the entry cap of 16,384. Shorten ' +
        'one of them first (or move part of topics/long into another entry), then merge again; nothing was merged.',
    );
    await expectUsageError(engram, ['merge', 'topics/coffee'], /missing required argument 'into'/);
  });

  it('words a revision that moved during the merge, and an unknown id to undo', async () => {
    const engram = await withCopies();
    const store = openSqliteStore({ path: engram.db });
    const memory = createMemory({ store });
    const me = { user: 'local', label: 'cli' };
    let refusal: unknown;
    try {
      await memory.tidy.merge(me, { from: 'people/barista', into: 'topics/coffee', fromRevision: 1, intoRevision: 4 });
    } catch (error) {
      refusal = error;
    } finally {
      await store.close();
    }
    expect(refusal).toBeInstanceOf(EngramError);
    expect(cliMessage(refusal as EngramError)).toBe(
      'topics/coffee changed while it was being merged (revision 4, now 1): nothing was merged. Look at it again ' +
        '(engram open), then run engram merge again.',
    );
    await expectRefused(
      engram,
      ['revert', '--undo', 'kx0-12345678'],
      'No revert or merge kx0-12345678 is kept in this memory’s history: check the id engram revert or engram merge printed; nothing was changed.'.replace(
        '’',
        "'",
      ),
    );
  });
});
