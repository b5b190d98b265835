/**
 * Refusals in the command line's words (issue #10, item 2): a person at the terminal is
 * told the flags to use (`-d`, `--new`, `--old`, `engram index`), never the model's
 * tool calls; the same refusals still reach the model in its own words, and the
 * recovery refusals leave core in no door's words (a library user reads them so).
 */

import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliMessage } from '../../src/cli/wording.js';
import { createMemory } from '../../src/memory/memory.js';
import { EngramError } from '../../src/memory/model/errors.js';
import { didYouMean } from '../../src/memory/model/format.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { CALLER, newMemory } from '../memory/fixtures.js';
import { inProcessCli, ok } from './fixtures.js';

/** The refusal of `work`, as the CLI words it. */
async function worded(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
  } catch (error) {
    if (error instanceof EngramError) return cliMessage(error);
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('refusals at the command line', () => {
  it('name flags and commands, never tool calls, for every write refusal that says how to call again', async () => {
    const memory = newMemory({ userCap: 60, maxEntries: 2, maxNames: 2 });
    await memory.write(CALLER, { name: 'topics/editor', description: 'Editor', new: 'Uses Helix.' });
    await memory.write(CALLER, { name: 'topics/empty', description: 'Empty', new: '' });
    const cases: Array<[() => Promise<unknown>, string]> = [
      [
        () => memory.write(CALLER, { name: 'topics/edtor', description: 'd' }),
        `topics/edtor not found.${didYouMean(['topics/editor'])} ` +
          'To create it: engram write topics/edtor -d "what it covers" --new TEXT (without --old).',
      ],
      [
        () => memory.write(CALLER, { name: 'topics/new', new: 'x' }),
        'topics/new does not exist yet: to create it, pass -d "one line on what it covers" together with its ' +
          'text (--new TEXT, or - to read it from stdin).',
      ],
      [
        () => memory.write(CALLER, { name: 'topics/editor', old: 'Vim', new: 'x' }),
        '--old text not found in topics/editor. Closest line: "Uses Helix." Copy the exact text from engram open topics/editor and run again.',
      ],
      [
        () => memory.write(CALLER, { name: 'topics/empty', old: 'x' }),
        '--old text not found in topics/empty: its body is empty. To add text: engram write topics/empty --new TEXT',
      ],
      [
        () => memory.write(CALLER, { name: 'topics/editor', old: '', new: 'x' }),
        '--old must not be empty: give the exact text to replace or remove, or leave --old out to append --new.',
      ],
      [
        () => memory.write(CALLER, { name: 'topics/editor' }),
        'Nothing to do: pass --new to append, --old and --new to replace, --old alone to remove, or -d to change the description.',
      ],
      [
        () => memory.write(CALLER, { name: 'topics/editor', description: ' ' }),
        '-d is empty once white space is folded: give one line on what topics/editor covers, or leave -d out to keep the current description.',
      ],
      [
        () => memory.write(CALLER, { name: 'topics/editor', new: 'x'.repeat(40) }),
        'topics/editor would bring this memory to 89 bytes (names, descriptions and bodies); the cap is 60. ' +
          'Make room first: shorten or drop entries that are no longer needed (engram index shows their sizes), then run again.',
      ],
      [
        () => memory.write(CALLER, { name: 'topics/third', description: 'T', new: 't' }),
        'topics/third would make 3 entries in this memory; the cap is 2. Make room first: merge related entries into one, ' +
          'or drop entries that are no longer needed (engram index lists them), then run again.',
      ],
      [
        () => memory.open(CALLER, ['topics/a', 'topics/b', 'topics/c']),
        'engram open takes at most 2 names at once; 3 were given. ' +
          'Open the entries you need most first, then the rest with another engram open.',
      ],
      [
        () => memory.drop(CALLER, 'topics/edtor'),
        `topics/edtor not found, nothing was dropped.${didYouMean(['topics/editor'])} engram index lists every entry.`,
      ],
    ];
    for (const [work, message] of cases) {
      const text = await worded(work);
      expect(text).toBe(message);
      expect(text).not.toMatch(/memory_(open|write|drop)/);
    }
  });

  it('name the command for every recovery refusal, which core words for no door', async () => {
    const memory = newMemory();
    await memory.write(CALLER, { name: 'topics/gone', description: 'Gone', new: 'one' });
    await memory.write(CALLER, { name: 'topics/gone', new: 'two' });
    await memory.drop(CALLER, 'topics/gone');
    await memory.write(CALLER, { name: 'topics/live', description: 'Live', new: 'one' });
    await memory.drop(CALLER, 'topics/live');
    await memory.write(CALLER, { name: 'topics/live', description: 'Live again', new: 'new' });
    const cases: Array<[() => Promise<unknown>, string, string]> = [
      [
        () => memory.recovery.restore(CALLER, 'topics/gone', 1),
        'topics/gone is in the trash: undrop it first, then restore.',
        'topics/gone is in the trash: run engram undrop topics/gone first, then restore.',
      ],
      [
        () => memory.recovery.undrop(CALLER, 'topics/live'),
        'topics/live cannot be undropped: a live entry has taken the name since. Rename or drop the live one first, then undrop again.',
        'topics/live cannot be undropped: a live entry has taken the name since. Rename or drop the live one first ' +
          '(engram open topics/live shows it), then undrop again.',
      ],
      [
        () => memory.recovery.undrop(CALLER, 'topics/none'),
        'topics/none is not in the trash; nothing was undropped.',
        'topics/none is not in the trash. engram trash lists what is.',
      ],
      [
        () => memory.recovery.purge(CALLER, 'topics/live', { force: false }),
        'topics/live is a live entry: drop it first, or purge it with force to remove it and all its history now.',
        'topics/live is a live entry: drop it first, or pass --force to purge it and all its history now.',
      ],
      [
        () => memory.recovery.revision(CALLER, 'topics/gone', 9),
        'topics/gone has no revision 9; the revisions kept are 1 to 3.',
        'topics/gone has no revision 9; the revisions kept are 1 to 3. engram history topics/gone lists them.',
      ],
    ];
    for (const [work, core, cli] of cases) {
      const error = await work().then(
        () => expect.unreachable('expected a refusal'),
        (refusal: unknown) => refusal,
      );
      if (!(error instanceof EngramError)) throw error;
      expect(error.message).toBe(core);
      expect(error.message).not.toMatch(/engram |--|\/api|memory_(open|write|drop)/);
      expect(cliMessage(error)).toBe(cli);
    }
  });

  it('say where to read a revision or a trashed entry that the caps in force now keep from coming back', async () => {
    const store = openMemoryStore();
    const roomy = createMemory({ store });
    await roomy.write(CALLER, { name: 'topics/long', description: 'Long', new: 'x'.repeat(99) });
    await roomy.write(CALLER, { name: 'topics/long', old: 'x'.repeat(99), new: 'short' });
    await roomy.write(CALLER, { name: 'topics/gone', description: 'D'.repeat(60), new: 'gone' });
    await roomy.drop(CALLER, 'topics/gone');
    const strict = createMemory({ store, policy: { entryCap: 50, descriptionCap: 40 } });
    expect(await worded(() => strict.recovery.restore(CALLER, 'topics/long', 1))).toBe(
      'topics/long would be 100 bytes; the cap is 50. Revision 1 cannot be restored as it is, under the caps in force ' +
        'now: engram show topics/long --rev 1 prints that revision; copy what you need from it into an entry within ' +
        'the caps (engram write); nothing was restored.',
    );
    expect(await worded(() => strict.recovery.undrop(CALLER, 'topics/gone'))).toBe(
      'The description of topics/gone is 60 characters; the cap is 40. topics/gone cannot be undropped as it is, ' +
        'under the caps in force now: engram show topics/gone --rev 2 prints that revision; copy what you need from ' +
        'it into an entry within the caps (engram write); nothing was undropped.',
    );
  });

  it('reach the person through engram itself, on stderr and in --json', async () => {
    const engram = inProcessCli();
    await ok(engram.run('write', 'topics/editor', '-d', 'Editor', '--new', 'Uses Helix.'));
    const missing = await engram.run('write', 'topics/x', '-d', 'Something');
    expect(missing).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'topics/x not found. To create it: engram write topics/x -d "what it covers" --new TEXT (without --old).\n',
    });
    const asJson = await engram.run('open', 'topics/nothing', '--json');
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stdout)).toEqual({
      error: { code: 'NOT_FOUND', message: 'topics/nothing not found.\nengram index lists every entry.' },
    });
  });

  it('name the flag that holds a NUL character, and -d over the description cap', async () => {
    const engram = inProcessCli({ descriptionCap: 10 });
    const nul = engram.dir.file('nul.txt');
    writeFileSync(nul, 'a\u0000b');
    expect(await engram.run('write', 'topics/x', '-d', 'X', '--new-file', nul)).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'The new text (--new, --new-file or - for stdin) contains a NUL character (\\u0000), which memory cannot hold. ' +
        'Remove it and run again.\n',
    });
    expect(await engram.run('write', 'topics/x', '-d', 'Eleven long', '--new', 'x')).toEqual({
      code: 1,
      stdout: '',
      stderr: '-d is 11 characters; the cap is 10. Shorten it to one line on what topics/x covers and run again.\n',
    });
  });

  it("say how to import an Engram export given as another memory system's file", async () => {
    const engram = inProcessCli();
    const engramExport = engram.dir.file('memory.json');
    writeFileSync(engramExport, JSON.stringify({ format: 'engram-export', version: 1, entries: [] }));
    expect(await engram.run('import', '--from', 'llama-webui', engramExport)).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'memory.json is an Engram export: import it with engram import FILE, without --from; nothing was imported.\n',
    });
  });

  it('put a user name or folder into a command to paste as one shell word, which no shell expands', () => {
    const user = '$(id)`id`';
    const refusal = (detail: ConstructorParameters<typeof EngramError>[2]) =>
      cliMessage(new EngramError('INVALID_ARGUMENT', 'core words', detail));
    expect(refusal({ reason: 'account-exists', user })).toBe(
      `user ${user} already exists; change the password with engram user set-password '$(id)\`id\`'`,
    );
    expect(refusal({ reason: 'user-not-found', user })).toContain(`engram user add '$(id)\`id\`' adds one.`);
    expect(refusal({ reason: 'no-such-folder', path: '/tmp/$HOME/m.db', folder: '/tmp/$HOME' })).toContain(
      "(mkdir -p '/tmp/$HOME')",
    );
  });

  it('keep the model its own words', async () => {
    const memory = newMemory();
    await expect(memory.write(CALLER, { name: 'topics/x', description: 'Something' })).rejects.toThrow(
      'topics/x not found. To create it, call memory_write with name, description and new (without old).',
    );
  });
});
