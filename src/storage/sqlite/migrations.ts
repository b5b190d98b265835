/**
 * The SQLite schema, as an ordered list of forward migrations. The database records
 * the version it is at; opening it applies the missing steps in one transaction, so
 * an upgrade either completes or leaves the file as it was. Never edit a shipped step:
 * append a new one.
 */

import { newerSchemaError } from '../newer-schema.js';
import type { Database } from './driver.js';

export const MIGRATIONS: readonly string[] = [
  // 1: entries (live and dropped), per-user usage, and every revision.
  `
  CREATE TABLE users (
    user_id     TEXT PRIMARY KEY,
    total_bytes INTEGER NOT NULL DEFAULT 0
  ) STRICT;

  CREATE TABLE entries (
    id          INTEGER PRIMARY KEY,
    user_id     TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    size        INTEGER NOT NULL,
    body        TEXT NOT NULL,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL,
    revision    INTEGER NOT NULL,
    dropped_at  INTEGER,
    dropped_by  TEXT
  ) STRICT;

  -- One live entry per name; the index is served from this covering index alone.
  CREATE UNIQUE INDEX entries_live ON entries (user_id, name) WHERE dropped_at IS NULL;
  CREATE INDEX entries_index ON entries (user_id, name, size, description) WHERE dropped_at IS NULL;
  CREATE INDEX entries_trash ON entries (user_id, dropped_at) WHERE dropped_at IS NOT NULL;

  CREATE TABLE revisions (
    entry_id    INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    revision    INTEGER NOT NULL,
    operation   TEXT NOT NULL,
    actor       TEXT NOT NULL,
    at          INTEGER NOT NULL,
    description TEXT NOT NULL,
    body        TEXT NOT NULL,
    PRIMARY KEY (entry_id, revision)
  ) STRICT, WITHOUT ROWID;
  `,
  // 2: entries_index also holds dropped_at, so the index query is answered from it alone.
  `
  DROP INDEX entries_index;
  CREATE INDEX entries_index ON entries (user_id, name, size, description, dropped_at) WHERE dropped_at IS NULL;
  `,
  // 3: bearer tokens of `engram serve --auth token`; only the SHA-256 of each secret is kept.
  `
  CREATE TABLE tokens (
    id        TEXT PRIMARY KEY,
    user_id   TEXT NOT NULL,
    label     TEXT NOT NULL,
    read_only INTEGER NOT NULL,
    hash      TEXT NOT NULL UNIQUE,
    created   INTEGER NOT NULL,
    last_used INTEGER
  ) STRICT;
  `,
  // 4: revisions become a rowid table: a body of 1-2 KiB then fits its row instead of
  // spilling onto overflow pages of the primary-key b-tree, so a durable write touches
  // fewer pages (about 15% faster here).
  `
  CREATE TABLE revisions_rowid (
    entry_id    INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    revision    INTEGER NOT NULL,
    operation   TEXT NOT NULL,
    actor       TEXT NOT NULL,
    at          INTEGER NOT NULL,
    description TEXT NOT NULL,
    body        TEXT NOT NULL,
    UNIQUE (entry_id, revision)
  ) STRICT;
  INSERT INTO revisions_rowid (entry_id, revision, operation, actor, at, description, body)
    SELECT entry_id, revision, operation, actor, at, description, body FROM revisions;
  DROP TABLE revisions;
  ALTER TABLE revisions_rowid RENAME TO revisions;
  `,
  // 5: usage counts names and descriptions too, the live entries, and the history's bytes
  // (kept by delta on every write, recomputed here for what is stored). Revisions carry
  // their user, and in_trash marks the latest revision of a dropped entry, so that the
  // revisions the history cap trims first are found by an index that the trash does not clog.
  `
  ALTER TABLE users ADD COLUMN entries INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE users ADD COLUMN history_bytes INTEGER NOT NULL DEFAULT 0;

  CREATE TABLE revisions_by_user (
    user_id     TEXT NOT NULL,
    entry_id    INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    revision    INTEGER NOT NULL,
    operation   TEXT NOT NULL,
    actor       TEXT NOT NULL,
    at          INTEGER NOT NULL,
    description TEXT NOT NULL,
    body        TEXT NOT NULL,
    in_trash    INTEGER NOT NULL,
    UNIQUE (entry_id, revision)
  ) STRICT;
  INSERT INTO revisions_by_user (user_id, entry_id, revision, operation, actor, at, description, body, in_trash)
    SELECT e.user_id, r.entry_id, r.revision, r.operation, r.actor, r.at, r.description, r.body,
      e.dropped_at IS NOT NULL AND r.revision = e.revision
    FROM revisions r JOIN entries e ON e.id = r.entry_id
    ORDER BY r.rowid;
  DROP TABLE revisions;
  ALTER TABLE revisions_by_user RENAME TO revisions;
  -- A user's revisions oldest first, the trash left out: what the history cap trims first.
  CREATE INDEX revisions_age ON revisions (user_id, at, entry_id, revision) WHERE in_trash = 0;

  INSERT OR IGNORE INTO users (user_id) SELECT DISTINCT user_id FROM entries;
  UPDATE users SET
    total_bytes = coalesce((
      SELECT sum(length(CAST(name AS BLOB)) + length(CAST(description AS BLOB)) + size)
      FROM entries WHERE entries.user_id = users.user_id AND dropped_at IS NULL), 0),
    entries = (SELECT count(*) FROM entries WHERE entries.user_id = users.user_id AND dropped_at IS NULL),
    history_bytes = coalesce((
      SELECT sum(length(CAST(description AS BLOB)) + length(CAST(body AS BLOB)))
      FROM revisions WHERE revisions.user_id = users.user_id), 0);
  `,
  // 6: remote sign-in (account-store.ts): accounts, browser sessions, registered OAuth
  // clients, grants and their secrets. Every secret is kept as its SHA-256 only; a grant's
  // secrets go with it (ON DELETE CASCADE), so revoking is one statement.
  `
  CREATE TABLE accounts (
    user_id       TEXT PRIMARY KEY,
    password_hash TEXT,
    created       INTEGER NOT NULL,
    updated       INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE sessions (
    id        TEXT PRIMARY KEY,
    hash      TEXT NOT NULL UNIQUE,
    user_id   TEXT NOT NULL,
    agent     TEXT NOT NULL,
    created   INTEGER NOT NULL,
    expires   INTEGER NOT NULL,
    last_used INTEGER
  ) STRICT;
  CREATE INDEX sessions_user ON sessions (user_id, created, id);
  CREATE INDEX sessions_expiry ON sessions (expires);

  CREATE TABLE oauth_clients (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    created       INTEGER NOT NULL,
    metadata      TEXT NOT NULL
  ) STRICT;

  CREATE TABLE grants (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    client_id   TEXT NOT NULL,
    client_name TEXT NOT NULL,
    read_only   INTEGER NOT NULL,
    resource    TEXT NOT NULL,
    created     INTEGER NOT NULL,
    last_used   INTEGER
  ) STRICT;
  CREATE INDEX grants_user ON grants (user_id);

  CREATE TABLE grant_secrets (
    hash     TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL REFERENCES grants (id) ON DELETE CASCADE,
    kind     TEXT NOT NULL,
    created  INTEGER NOT NULL,
    expires  INTEGER NOT NULL,
    used     INTEGER,
    data     TEXT NOT NULL
  ) STRICT;
  CREATE INDEX grant_secrets_grant ON grant_secrets (grant_id);
  CREATE INDEX grant_secrets_expiry ON grant_secrets (expires);
  `,
  // 7: full-text search of live entries (memory/search.ts): an FTS5 index of their names,
  // descriptions and bodies that keeps no text of its own (contentless, rowid = entry id),
  // words folded by unicode61 without accents, prefixes of 2 and 3 indexed for searching
  // as one types. Triggers keep it in the transaction of every write to entries (a write,
  // drop, undrop, purge, trim, load or wipe), so no write path can miss it; secure-delete
  // takes a removed entry's words out of the index at once rather than marking them.
  `
  CREATE VIRTUAL TABLE entries_search USING fts5 (
    name, description, body,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
  );
  INSERT INTO entries_search (entries_search, rank) VALUES ('secure-delete', 1);
  INSERT INTO entries_search (rowid, name, description, body)
    SELECT id, name, description, body FROM entries WHERE dropped_at IS NULL;

  CREATE TRIGGER entries_search_insert AFTER INSERT ON entries WHEN new.dropped_at IS NULL BEGIN
    INSERT INTO entries_search (rowid, name, description, body) VALUES (new.id, new.name, new.description, new.body);
  END;
  CREATE TRIGGER entries_search_update AFTER UPDATE OF name, description, body, dropped_at ON entries BEGIN
    DELETE FROM entries_search WHERE old.dropped_at IS NULL AND rowid = old.id;
    INSERT INTO entries_search (rowid, name, description, body)
      SELECT new.id, new.name, new.description, new.body WHERE new.dropped_at IS NULL;
  END;
  CREATE TRIGGER entries_search_delete AFTER DELETE ON entries WHEN old.dropped_at IS NULL BEGIN
    DELETE FROM entries_search WHERE rowid = old.id;
  END;
  `,
  // 8: activity (memory/activity.ts): a user's revisions newest first, all of them or one
  // actor's, read by index however long the history grows; and each user's change counter,
  // moved in the transaction of every change, which watchers poll (storage/change-feed.ts).
  `
  ALTER TABLE users ADD COLUMN changes INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX revisions_activity ON revisions (user_id, at, entry_id, revision);
  CREATE INDEX revisions_actor ON revisions (user_id, actor, at, entry_id, revision);
  `,
  // 9: the search index follows writes in batches (search-backlog.ts), no longer inside each
  // write: indexing an entry's words cost most of a write's CPU and two thirds of the pages
  // it wrote. Every change to an entry's text or liveness (and every delete) marks the entry
  // in search_pending, in the write's own transaction; the index here is up to date, so
  // nothing is marked yet. FTS5 merges its segments only when 8 pile up on one level, not a
  // little after every batch: a third of the pages and half the time of a catch-up.
  `
  CREATE TABLE search_pending (entry_id INTEGER PRIMARY KEY) STRICT;
  INSERT INTO entries_search (entries_search, rank) VALUES ('automerge', 0);
  INSERT INTO entries_search (entries_search, rank) VALUES ('crisismerge', 8);
  DROP TRIGGER entries_search_insert;
  DROP TRIGGER entries_search_update;
  DROP TRIGGER entries_search_delete;
  CREATE TRIGGER search_pending_insert AFTER INSERT ON entries BEGIN
    INSERT OR IGNORE INTO search_pending (entry_id) VALUES (new.id);
  END;
  CREATE TRIGGER search_pending_update AFTER UPDATE OF name, description, body, dropped_at ON entries BEGIN
    INSERT OR IGNORE INTO search_pending (entry_id) VALUES (new.id);
  END;
  CREATE TRIGGER search_pending_delete AFTER DELETE ON entries BEGIN
    INSERT OR IGNORE INTO search_pending (entry_id) VALUES (old.id);
  END;
  `,
  // 10: one index fewer to write with every revision: the history cap finds its candidates by
  // revisions_activity (the same order, the trash's latest revisions skipped as every
  // entry's latest is), so revisions_age goes, and with it every use of in_trash (left in
  // place, no longer kept: dropping a column rewrites every revision). Clients no grant
  // names are found by an index of grants' client_id, not by reading every grant.
  `
  DROP INDEX revisions_age;
  CREATE INDEX grants_client ON grants (client_id);
  `,
  // 11: each body stored once, in its revision: an entry's body is NULL where its latest
  // revision holds the same text (every entry Engram writes), and kept only where none does
  // (entries written by hand or by an older Engram without that revision), so not a byte is
  // lost. Small entry rows are rewritten in place as bodies grow, where 1 KiB rows split
  // their pages: about one WAL page fewer per write. Rebuilt as SQLite alters a column's
  // constraint, with foreign keys off (migrate), so dropping the old table deletes no revision.
  `
  CREATE TABLE entries_body_once (
    id          INTEGER PRIMARY KEY,
    user_id     TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    size        INTEGER NOT NULL,
    body        TEXT,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL,
    revision    INTEGER NOT NULL,
    dropped_at  INTEGER,
    dropped_by  TEXT
  ) STRICT;
  INSERT INTO entries_body_once (id, user_id, name, description, size, body, created, updated, revision, dropped_at, dropped_by)
    SELECT id, user_id, name, description, size,
      iif(body IS (SELECT r.body FROM revisions r WHERE r.entry_id = entries.id AND r.revision = entries.revision), NULL, body),
      created, updated, revision, dropped_at, dropped_by
    FROM entries;
  DROP TABLE entries;
  ALTER TABLE entries_body_once RENAME TO entries;
  CREATE UNIQUE INDEX entries_live ON entries (user_id, name) WHERE dropped_at IS NULL;
  CREATE INDEX entries_index ON entries (user_id, name, size, description, dropped_at) WHERE dropped_at IS NULL;
  CREATE INDEX entries_trash ON entries (user_id, dropped_at) WHERE dropped_at IS NOT NULL;
  CREATE TRIGGER search_pending_insert AFTER INSERT ON entries BEGIN
    INSERT OR IGNORE INTO search_pending (entry_id) VALUES (new.id);
  END;
  CREATE TRIGGER search_pending_update AFTER UPDATE OF name, description, body, revision, dropped_at ON entries BEGIN
    INSERT OR IGNORE INTO search_pending (entry_id) VALUES (new.id);
  END;
  CREATE TRIGGER search_pending_delete AFTER DELETE ON entries BEGIN
    INSERT OR IGNORE INTO search_pending (entry_id) VALUES (old.id);
  END;
  `,
  // 12: the search index no longer keeps prefix indexes (prefix = '2 3'): they tripled the
  // cost of indexing an entry, which a write pays again in full (the whole entry is indexed
  // after each write, however little changed) and which was the largest part of a write
  // server's CPU. A search for a word's first letters still works, through the terms
  // themselves; at 10,000 entries a search took 15-60 ms either way, its time going to
  // ranking every match. Rebuilt here from the entries as they are (~0.9 s at 10,000), so
  // nothing waits to be indexed afterwards.
  `
  DROP TABLE entries_search;
  CREATE VIRTUAL TABLE entries_search USING fts5 (
    name, description, body,
    content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
  );
  INSERT INTO entries_search (entries_search, rank) VALUES ('secure-delete', 1);
  INSERT INTO entries_search (entries_search, rank) VALUES ('automerge', 0);
  INSERT INTO entries_search (entries_search, rank) VALUES ('crisismerge', 8);
  INSERT INTO entries_search (rowid, name, description, body)
    SELECT id, name, description, coalesce(body, (SELECT head.body FROM revisions head
      WHERE head.entry_id = entries.id AND head.revision = entries.revision))
    FROM entries WHERE dropped_at IS NULL;
  DELETE FROM search_pending;
  `,
  // 13: one revision index fewer written with every change: revisions_actor (a user's
  // revisions by actor) goes, and revisions_activity (the user's revisions in time order)
  // carries the actor after its key, so the actors and one actor's activity are read from
  // it alone, never from the revisions' rows: about one WAL page of some ten fewer per
  // write. One actor's page of activity now walks the user's history from the newest
  // until it has enough of theirs (a filter the web UI offers); the history cap bounds that
  // walk, as it bounded the count of every actor's changes, which read the whole index already.
  `
  DROP INDEX revisions_actor;
  DROP INDEX revisions_activity;
  CREATE INDEX revisions_activity ON revisions (user_id, at, entry_id, revision, actor);
  `,
  // 14: a change to an entry no longer marks it in search_pending: every such change adds a
  // revision, and the search index catches up from a watermark on the revisions' rowids
  // (search-backlog.ts), where the mark was a row of another table written with every
  // write: one WAL page of some nine fewer. New and deleted entries are still marked by
  // their triggers (a load, a purge or a trim deletes revisions with them), and a write
  // whose revision the watermark cannot show (a rowid taken again after the newest
  // revisions were deleted, or a revision trimmed at once) marks its entry itself. The
  // index is up to date with every revision stored here, so the watermark starts at the last.
  `
  CREATE TABLE search_watermark (revision INTEGER NOT NULL) STRICT;
  INSERT INTO search_watermark (revision) SELECT coalesce(max(rowid), 0) FROM revisions;
  DROP TRIGGER search_pending_update;
  `,
  // 15: a new entry is no longer marked by a trigger either: Engram creates every entry with
  // its first revision, which the watermark shows (or marks, where it cannot); a load, the
  // one path that inserts entries without one, marks what it loaded (dump.ts). One page
  // fewer for every entry created. A deleted entry keeps its trigger.
  `
  DROP TRIGGER search_pending_insert;
  `,
  // 16: when the consent page was last shown for each registered client (ms, NULL if never):
  // at the registration cap, a client a person may be deciding about is not pushed out.
  'ALTER TABLE oauth_clients ADD COLUMN shown INTEGER;',
  // 17: a revision may carry a note naming why it was made (a revert, memory/revert.ts): NULL for
  // every other change. A revert's revisions carry its id in the note, so it can be undone.
  'ALTER TABLE revisions ADD COLUMN note TEXT;',
  // 18: changes held for review (memory/review.ts): a token or connected app may be in review
  // mode (1), and its writes and drops wait in proposals, a user's in the order they came,
  // until the user approves or rejects them or they expire (by age, across users).
  `
  ALTER TABLE tokens ADD COLUMN review INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE grants ADD COLUMN review INTEGER NOT NULL DEFAULT 0;
  CREATE TABLE proposals (
    user_id              TEXT NOT NULL,
    id                   TEXT NOT NULL,
    name                 TEXT NOT NULL,
    operation            TEXT NOT NULL,
    description          TEXT,
    new_text             TEXT,
    old_text             TEXT,
    base_revision        INTEGER NOT NULL,
    proposed_description TEXT NOT NULL,
    proposed_body        TEXT NOT NULL,
    actor                TEXT NOT NULL,
    at                   INTEGER NOT NULL,
    PRIMARY KEY (user_id, id)
  ) STRICT;
  CREATE INDEX proposals_waiting ON proposals (user_id, at, id);
  CREATE INDEX proposals_age ON proposals (at);
  `,
  // 19: when a model last opened each entry (ms, NULL: not since), noted at most once an hour
  // (memory/opened.ts), and since when that is recorded: this upgrade, or the file's creation.
  // No index holds opened and no trigger watches it (search_pending_delete fires on a delete
  // only), so noting an opening rewrites the one row and nothing else.
  `
  ALTER TABLE entries ADD COLUMN opened INTEGER;
  CREATE TABLE opened_since (at INTEGER NOT NULL) STRICT;
  INSERT INTO opened_since (at) VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
  `,
  // 20: one index fewer written with every change: entries_index (the index lines' columns, a
  // covering index of the live entries) goes. Every append or replace moves an entry's size,
  // so every write rewrote a leaf of it: one WAL page of some seven per write, and a tenth of
  // a write's CPU. The store keeps each user's index read and patches a write's line into it
  // (index-cache.ts), so the whole index is read only when nothing is kept (the first read,
  // another connection's write): then from entries_live and the entries' rows, which hold no
  // body since schema 11 (a whole memory_open() a fifth to a third slower than from the
  // covering index alone, at 1,000 and 10,000 entries).
  'DROP INDEX entries_index;',
  // 21: FTS5's secure-delete off. On this contentless_delete table it took no word out of
  // the index's file: deleting a row only marks it deleted (a tombstone); the option made
  // each catch-up look up every word of the entries it indexed again in the older segments
  // (fts5FlushSecureDelete), and cut nothing out: the index's bytes were the same either
  // way, and the words an edit removed stay until a merge either way (a purge merges the
  // whole index: store.ts). It cost a catch-up 400-500 µs an entry against 32-38, for 64
  // entries of ~8 KiB in one transaction (2026-12-07, interleaved); the search worker's CPU
  // per write 324-357 µs against 91-94 with 64 connections appending to 500 entries.
  "INSERT INTO entries_search (entries_search, rank) VALUES ('secure-delete', 0);",
  // 22: the search index holds an entry in parts (search-backlog.ts, SEARCH_PARTS): part 0
  // at the entry's id, as before, then what was appended since, each catch-up's a part of
  // its own, at the id plus 2^40 times its number; this table says how many parts an entry
  // has, how long the text they hold is and its digest. An entry without a row has part 0
  // at most, so the index as it is stays right: each entry is indexed whole at its next
  // catch-up, then in parts. (As with every step, an older Engram still running on the
  // file knows nothing of parts until it is restarted: it refuses the file then.)
  `CREATE TABLE search_parts (
    entry_id INTEGER PRIMARY KEY,
    parts    INTEGER NOT NULL,
    chars    INTEGER NOT NULL,
    digest   TEXT NOT NULL
  ) STRICT;`,
];

/** The schema version the database records (undefined for a new one), read without taking the write lock. */
export function recordedVersion(db: Database): number | undefined {
  const table = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'").get();
  if (!table) return undefined;
  return (db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined)?.version;
}

/**
 * Brings the database to the newest schema in one immediate transaction. A database
 * already at the newest schema is only read, so opening it never waits for another
 * process's write lock.
 */
export function migrate(db: Database, path: string): void {
  const recorded = recordedVersion(db);
  if (recorded === MIGRATIONS.length) return;
  // Refused before anything is written, even the schema_version table.
  if (recorded !== undefined && recorded > MIGRATIONS.length) throw newer(path, recorded);
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  // Foreign keys off while migrating (they cannot be switched inside the transaction): a step
  // that rebuilds a table drops the old one, which must not cascade to the rows referring to it.
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) === 1;
  db.pragma('foreign_keys = OFF');
  try {
    upgrade(db, path);
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`);
  }
}

function newer(path: string, found: number) {
  return newerSchemaError(`The memory's database ${path}`, found, MIGRATIONS.length);
}

function upgrade(db: Database, path: string): void {
  db.transaction(() => {
    const row = db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
    const current = row?.version ?? 0;
    // A newer Engram may have upgraded the file since it was first read.
    if (current > MIGRATIONS.length) throw newer(path, current);
    for (const step of MIGRATIONS.slice(current)) db.exec(step);
    if (!row) db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(MIGRATIONS.length);
    else if (current < MIGRATIONS.length) db.prepare('UPDATE schema_version SET version = ?').run(MIGRATIONS.length);
  }).immediate();
}
