/**
 * A person's edits (editor.ts) over the in-process store: a save replaces the whole body
 * and description, refused with STALE_REVISION (nothing changed) once a model has written
 * since the revision it names; a create never appends to a taken name; the tool's name
 * rules and caps hold for both.
 */

import { describe, expect, it } from 'vitest';
import { createEntry, saveEntry } from '../../src/memory/editor.js';
import { type Caller, createMemory } from '../../src/memory/memory.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';
import { expectEngramError } from './fixtures.js';

const person: Caller = { user: 'alice', label: 'web', readOnly: false };
const model: Caller = { user: 'alice', label: 'model', readOnly: false };

function setup() {
  const memory = createMemory({ store: openMemoryStore() });
  return memory;
}

describe('saveEntry', () => {
  it('replaces the whole body and description as one revision by the person', async () => {
    const memory = setup();
    await memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.\nOolong.' });
    const { entry, changed } = await saveEntry(memory, person, {
      name: 'Topics/Tea',
      description: 'Teas I like',
      body: 'Green.\r\nOolong.\r\nSencha.\n',
      expectedRevision: 1,
    });
    expect(changed).toBe(true);
    expect(entry).toMatchObject({ revision: 2, description: 'Teas I like', body: 'Green.\nOolong.\nSencha.\n' });
    const history = await memory.recovery.history(person, 'topics/tea');
    expect(history.at(-1)).toMatchObject({ operation: 'replace', actor: 'web' });
  });

  it('records a description alone as describe, and a save that changes nothing records nothing', async () => {
    const memory = setup();
    await memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    expect(
      (await saveEntry(memory, person, { name: 'topics/tea', description: 'Tea', body: 'Green.\n' })).changed,
    ).toBe(false);
    await saveEntry(memory, person, { name: 'topics/tea', description: 'Teas', body: 'Green.\n' });
    expect((await memory.recovery.history(person, 'topics/tea')).map((item) => item.operation)).toEqual([
      'create',
      'describe',
    ]);
  });

  it('fills an entry whose body is empty', async () => {
    const memory = setup();
    await memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    await memory.write(model, { name: 'topics/tea', old: 'Green.' });
    expect((await saveEntry(memory, person, { name: 'topics/tea', body: 'Black.\n' })).entry.body).toBe('Black.\n');
  });

  it('refuses, changing nothing, a save based on a revision a model has moved past', async () => {
    const memory = setup();
    await memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    await memory.write(model, { name: 'topics/tea', new: 'Oolong.' });
    const error = await expectEngramError(
      () => saveEntry(memory, person, { name: 'topics/tea', body: 'Mine.\n', expectedRevision: 1 }),
      'STALE_REVISION',
    );
    expect(error.detail).toEqual({ reason: 'stale-revision', name: 'topics/tea', expected: 1, current: 2 });
    expect(error.message).toBe('topics/tea has changed since you opened it (revision 1, now 2); nothing was saved.');
    expect((await memory.open(person, ['topics/tea'])).found[0]?.body).toBe('Green.\nOolong.\n');
  });

  it('refuses an entry that is gone, a bad name, a read-only caller and a body over the entry cap', async () => {
    const memory = setup();
    await expectEngramError(() => saveEntry(memory, person, { name: 'topics/none', body: 'x' }), 'NOT_FOUND');
    await expectEngramError(() => saveEntry(memory, person, { name: 'topics/No Good', body: 'x' }), 'INVALID_NAME');
    await memory.write(model, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    await expectEngramError(
      () => saveEntry(memory, { ...person, readOnly: true }, { name: 'topics/tea', body: 'x' }),
      'READ_ONLY_TOKEN',
    );
    await expectEngramError(
      () => saveEntry(memory, person, { name: 'topics/tea', body: 'x'.repeat(20_000) }),
      'TOO_LARGE',
    );
    expect((await memory.open(person, ['topics/tea'])).found[0]?.revision).toBe(1);
  });
});

describe('createEntry', () => {
  it('creates a new entry with a final newline, as memory_write does', async () => {
    const memory = setup();
    const entry = await createEntry(memory, person, {
      name: 'people/Ada',
      description: ' Ada\nLovelace ',
      body: 'Math.',
    });
    expect(entry).toMatchObject({ name: 'people/ada', description: 'Ada Lovelace', body: 'Math.\n', revision: 1 });
  });

  it('refuses a taken name instead of appending, and the tool’s refusals for the rest', async () => {
    const memory = setup();
    await memory.write(model, { name: 'people/ada', description: 'Ada', new: 'Math.' });
    const taken = await expectEngramError(
      () => createEntry(memory, person, { name: 'people/ada', description: 'Ada', body: 'Other.' }),
      'CONFLICT',
    );
    expect(taken.message).toBe('people/ada already exists: open it to change it, or choose another name.');
    await expectEngramError(
      () => createEntry(memory, person, { name: 'people/bob', description: ' ', body: 'x' }),
      'INVALID_ARGUMENT',
    );
    await expectEngramError(
      () => createEntry(memory, person, { name: 'secret/x', description: 'x', body: 'x' }),
      'READ_ONLY_GROUP',
    );
    expect((await memory.index(person)).map((row) => row.name)).toEqual(['people/ada']);
  });
});
