/**
 * The MCP floor's memory in SQLite (floor-server.ts): per entry a head row that points at
 * its latest revision, the revisions with their bodies, a usage row per user. An open is
 * one indexed read of the entry's latest revision; an append saves the rows of the
 * in-process fair floor (a new revision, the entry's head, the user's usage) durably (WAL,
 * synchronous=FULL), the appends that arrive together sharing one commit (group commit),
 * each answered once its commit is on disk.
 */

import Database from 'better-sqlite3';
import {
  type FloorEntry,
  type FloorMemory,
  type FloorSeed,
  groupCommitted,
  type WaitingAppend,
} from './floor-memory.js';

export function openSqliteFloor(path: string, seed: FloorSeed): FloorMemory {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`
    CREATE TABLE entries (id INTEGER PRIMARY KEY, user TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL,
      head INTEGER NOT NULL, size INTEGER NOT NULL, UNIQUE (user, name)) STRICT;
    CREATE TABLE revisions (id INTEGER PRIMARY KEY, entry_id INTEGER NOT NULL, at INTEGER NOT NULL, body TEXT NOT NULL) STRICT;
    CREATE TABLE usage (user TEXT PRIMARY KEY, bytes INTEGER NOT NULL) STRICT;
  `);
  const addRevision = db.prepare('INSERT INTO revisions (entry_id, at, body) VALUES (?, ?, ?)');
  const addEntry = db.prepare(
    'INSERT INTO entries (id, user, name, description, head, size) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const addUser = db.prepare('INSERT INTO usage (user, bytes) VALUES (?, ?)');
  const read = db.prepare(`SELECT entries.id, name, description, size, body FROM entries
    JOIN revisions ON revisions.id = entries.head WHERE user = ? AND name = ?`);
  const moveHead = db.prepare('UPDATE entries SET head = ?, size = ? WHERE id = ?');
  const addUsage = db.prepare('UPDATE usage SET bytes = bytes + ? WHERE user = ?');
  db.transaction(() => {
    let id = 0;
    for (const { user, entries } of seed) {
      let bytes = 0;
      for (const { name, description, body, size } of entries) {
        const revision = addRevision.run(id, Date.now(), body).lastInsertRowid;
        addEntry.run(id++, user, name, description, revision, size);
        bytes += size;
      }
      addUser.run(user, bytes);
    }
  })();

  const commit = db.transaction((appends: readonly WaitingAppend[]) =>
    appends.map(({ user, name, line }) => {
      const row = read.get(user, name) as FloorEntry & { id: number };
      const added = `${line}\n`;
      const size = row.size + Buffer.byteLength(added);
      const revision = addRevision.run(row.id, Date.now(), `${row.body}${added}`).lastInsertRowid;
      moveHead.run(revision, size, row.id);
      addUsage.run(size - row.size, user);
      return { name: row.name, description: row.description, size };
    }),
  );

  return {
    open: async (user, name) => read.get(user, name) as FloorEntry,
    append: groupCommitted(commit),
    close: async () => {
      db.close();
    },
  };
}
