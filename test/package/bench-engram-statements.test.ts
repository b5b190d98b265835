/**
 * The in-process benchmark's "Engram's statements alone" (bench/engram-statements.ts) must
 * be what its column says: the writes an Engram append makes, with no code around them.
 * Its database is opened afterwards by the real SQLite store and compared with a twin that
 * Engram itself seeded and appended to: the same entry, revisions, counters and search —
 * else "statements / floor" would bound something other than Engram's schema.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { bodyOf, exportDocument, floorEntry, subject, subjects } from '../../bench/content.js';
import { openEngramStatements } from '../../bench/engram-statements.js';
import { createMemory } from '../../src/memory/memory.js';
import { createToolHandler } from '../../src/memory/tools/handler.js';
import { openSqliteStore } from '../../src/storage/sqlite/index.js';
import { createTransfer } from '../../src/transfer/transfer.js';

const caller = { user: 'local', label: 'bench' };
const LINE = 'note 7: the statements alone wrote this zebra line';

function openStore(path: string) {
  const store = openSqliteStore({ path });
  onTestFinished(() => store.close());
  return { store, memory: createMemory({ store }) };
}

/** What a store holds of one entry and its user, without the times and actors that differ by design. */
async function seen(path: string, name: string) {
  const { store, memory } = openStore(path);
  const [entry] = (await memory.open(caller, [name])).found;
  const history = await store.history('local', name);
  return {
    entry: { description: entry?.description, body: entry?.body, size: entry?.size, revision: entry?.revision },
    history: history.map(({ revision, operation, description, body }) => ({ revision, operation, description, body })),
    users: await store.users(),
    found: (await memory.search(caller, 'zebra')).map((hit) => hit.name),
  };
}

it('writes what Engram writes for an import and an append, in a database Engram then reads as its own', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'engram-statements-'));
  onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
  const name = subject(1).name;

  const statements = openEngramStatements(join(folder, 'statements.db'));
  statements.seed('local', subjects(0, 2).map(floorEntry));
  statements.seed('local', subjects(2, 3).map(floorEntry));
  expect(statements.transaction(() => statements.append('local', name, LINE))).toEqual({
    name,
    description: subject(1).description,
    size: Buffer.byteLength(`${bodyOf(subject(1))}${LINE}\n`),
  });
  expect(statements.open('local', name).body).toBe(`${bodyOf(subject(1))}${LINE}\n`);
  statements.close();

  const twin = openStore(join(folder, 'engram.db'));
  await createTransfer(twin.memory).import(caller, exportDocument(subjects(0, 3)), { mode: 'merge' });
  const appended = await createToolHandler(twin.memory)(caller, 'memory_write', { name, new: LINE });
  expect(appended.isError).toBe(false);
  await twin.store.close();

  const alone = await seen(join(folder, 'statements.db'), name);
  expect(alone.history.map((revision) => revision.operation)).toEqual(['import', 'append']);
  expect(alone.entry.body).toContain(LINE);
  expect(alone.found).toEqual([name]);
  expect(alone).toEqual(await seen(join(folder, 'engram.db'), name));
});
