/**
 * The SQLite schema, as an ordered list of forward migrations. The database records
 * the version it is at; opening it applies the missing steps in one transaction, so
 * an upgrade either completes or leaves the file as it was. Never edit a shipped step:
 * append a new one.
 */

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
];
