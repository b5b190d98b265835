/**
 * `engram revert` in process on a temporary database: an app's changes (written through
 * the library as that app) previewed with --dry-run, reverted, the conflict skipped
 * unless named, the revert undone with --undo; --json for scripts; bad flags and times
 * are usage errors, an unknown actor a refusal, and none of them changes anything.
 */

import { describe, expect, it } from 'vitest';
import { type Caller, createMemory } from '../../src/memory/memory.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { type Cli, cli, expectRefused, expectUsageError, ok } from './fixtures.js';

const ROGUE: Caller = { user: 'local', label: 'rogue-app' };
const LAPTOP: Caller = { user: 'local', label: 'laptop' };

/** The person's two entries; then the app appends to one, creates one, and drops one; then laptop changes the first. */
async function scenario(): Promise<Cli> {
  const engram = cli();
  await ok(engram.run('write', 'topics/a', '-d', 'About a', '--new', 'one'));
  await ok(engram.run('write', 'topics/b', '-d', 'About b', '--new', 'two'));
  await ok(engram.run('write', 'topics/c', '-d', 'About c', '--new', 'three'));
  const store = openSqliteStore({ path: engram.db });
  const memory = createMemory({ store });
  await memory.write(ROGUE, { name: 'topics/a', new: 'poisoned' });
  await memory.write(ROGUE, { name: 'topics/b', new: 'poisoned too' });
  await memory.write(ROGUE, { name: 'topics/new', description: 'Planted', new: 'evil' });
  await memory.drop(ROGUE, 'topics/c');
  await memory.write(LAPTOP, { name: 'topics/b', new: 'later' });
  await store.close();
  return engram;
}

describe('engram revert', () => {
  it('previews with --dry-run, changing nothing: each entry, what it returns to, the conflict and how to choose it', async () => {
    const engram = await scenario();
    const before = await ok(engram.run('open', 'topics/a', 'topics/b', 'topics/new'));
    const text = await ok(engram.run('revert', '--actor', 'rogue-app', '--since', '1h', '--dry-run'));
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^Revert of rogue-app's changes since \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ: 4 entries\.$/);
    expect(lines).toContain('restore   topics/a');
    expect(lines).toContain('          returns to: About a');
    expect(lines).toContain('restore   topics/b  (conflict)');
    expect(lines.some((line) => /^ {10}changed since: append by laptop at /.test(line))).toBe(true);
    expect(lines).toContain('undrop    topics/c');
    expect(lines).toContain('drop      topics/new');
    expect(lines).toContain('          returns to: not there (dropped to the trash)');
    expect(lines).toContain('Conflicts are skipped unless chosen: --include-conflicts topics/b, or --all-conflicts.');
    expect(lines.at(-1)).toBe('Dry run: nothing was changed.');
    expect(await ok(engram.run('open', 'topics/a', 'topics/b', 'topics/new'))).toBe(before);
  });

  it('reverts, skipping the conflict, prints the id; --undo puts every entry back', async () => {
    const engram = await scenario();
    const before = await ok(engram.run('open', 'topics/a', 'topics/b', 'topics/new'));
    const text = await ok(engram.run('revert', '--actor', 'rogue-app', '--since', '1h'));
    const id = /^Reverted 3 entries as revert (\S+):$/m.exec(text)?.[1] ?? '';
    expect(text).toContain('  skipped topics/b (changed by another since: a conflict)');
    expect(text.trimEnd().split('\n').at(-1)).toBe(`Undo it with: engram revert --undo ${id}`);
    expect(await ok(engram.run('open', 'topics/a'))).toContain('one\n');
    expect(await ok(engram.run('open', 'topics/a'))).not.toContain('poisoned');
    expect(await ok(engram.run('open', 'topics/c'))).toContain('three');
    expect((await engram.run('open', 'topics/new')).code).toBe(1);
    expect(await ok(engram.run('history', 'topics/a'))).toMatch(
      new RegExp(`\n {6}revert ${id}: rogue-app's changes since `),
    );
    const history = JSON.parse(await ok(engram.run('history', 'topics/a', '--json')));
    expect(history.at(-1)).toMatchObject({
      actor: 'cli',
      operation: 'restore',
      note: expect.stringMatching(`^revert ${id}: `),
    });

    const undone = await ok(engram.run('revert', '--undo', id, '--json'));
    expect(JSON.parse(undone)).toMatchObject({ reverted: expect.any(Array), skipped: [] });
    expect(await ok(engram.run('open', 'topics/a', 'topics/b', 'topics/new'))).toBe(before);
  });

  it('reverts a conflict named with --include-conflicts; --json gives the preview with ISO times', async () => {
    const engram = await scenario();
    const preview = JSON.parse(
      await ok(engram.run('revert', '--actor', 'rogue-app', '--since', '1h', '--dry-run', '--json')),
    );
    expect(preview.since).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(preview.entries.map((entry: { name: string }) => entry.name)).toEqual([
      'topics/a',
      'topics/b',
      'topics/c',
      'topics/new',
    ]);
    const result = JSON.parse(
      await ok(
        engram.run('revert', '--actor', 'rogue-app', '--since', '1h', '--include-conflicts', 'topics/b', '--json'),
      ),
    );
    expect(result.skipped).toEqual([]);
    expect(await ok(engram.run('open', 'topics/b'))).not.toContain('later');
  });

  it('refuses an unknown actor, naming the actors, and an empty range, changing nothing', async () => {
    const engram = await scenario();
    await expectRefused(
      engram,
      ['revert', '--actor', 'nobody', '--since', '1d'],
      'No change by "nobody" is kept in this memory\'s history; nothing was reverted. The actors are: rogue-app, cli, laptop. ' +
        'engram activity shows who changed what (the actor is the fourth column).',
    );
    await expectRefused(
      engram,
      ['revert', '--actor', 'rogue-app', '--since', '2099-01-01'],
      'rogue-app made no change since 2099-01-01T00:00:00.000Z that history still keeps: nothing to revert. Choose a wider range.',
    );
  });

  it('makes a bad time, missing flags, both conflict flags and a bad id usage errors', async () => {
    const engram = await scenario();
    await expectUsageError(
      engram,
      ['revert', '--actor', 'rogue-app', '--since', 'yesterday'],
      /expected a time: an ISO date/,
    );
    await expectUsageError(engram, ['revert', '--actor', 'rogue-app'], /give --actor NAME and --since TIME/);
    await expectUsageError(
      engram,
      ['revert', '--actor', 'rogue-app', '--since', '1h', '--all-conflicts', '--include-conflicts', 'topics/b'],
      /not both/,
    );
    await expectUsageError(engram, ['revert', '--undo', 'nope'], /expected a revert or merge id/);
  });
});
