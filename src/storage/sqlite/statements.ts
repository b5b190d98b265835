/**
 * Every SQL statement the SQLite store runs, prepared once per connection. Queries are
 * keyed by user; the index reads the live entries' rows in name order (by entries_live),
 * never their bodies (most rows hold none: their latest revision does).
 */

import { bodyOf, entryColumns, revisionBytes } from '../sql-rows.js';
import type { Database, Statement } from './driver.js';
import { SEARCH_PARTS } from './search-backlog.js';

/** Where a user's change counter starts when their row is made: the floor a load leaves in the file's user_version (dump.ts). */
export const CHANGE_FLOOR = '(SELECT user_version FROM pragma_user_version)';

/** The columns an entry is read by, in the order of EntryRow (sql-rows.ts). */
const ENTRY_COLUMNS = entryColumns('entries');

/** An entry's live copy by (user, name): prepared twice, its row as an object (live) and as an array (liveColumns). */
const LIVE = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = ? AND name = ? AND dropped_at IS NULL`;

/** The time now in ms since the epoch, by SQLite's clock (as migration 19 records it). */
export const SQLITE_NOW_MS = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";

/** What a revision takes against the history cap (sql-rows.ts). */
const REVISION_BYTES = revisionBytes();

/** A search term as an FTS5 query: a quoted string (a `"` in it doubled), a prefix when it is the last. */
function termQuery(term: string, at: number, terms: readonly string[]): string {
  return `"${term.replaceAll('"', '""')}"${at === terms.length - 1 ? '*' : ''}`;
}

/**
 * The FTS5 query of search terms (memory/search.ts) within `column`: every term there.
 * Built from the terms, never from what was typed: no FTS5 operator (OR, NEAR, `*`, `(`,
 * `:`) can get in.
 */
export function searchMatch(terms: readonly string[], column: 'name' | 'description'): string {
  return `{${column}} : (${terms.map(termQuery).join(' ')})`;
}

/**
 * The terms as a JSON list of FTS5 queries, one each, for a search that finds an entry
 * whose parts hold every term between them (SQL.search): an entry indexed in several parts
 * may hold one term in one and another in the next.
 */
export function searchTerms(terms: readonly string[]): string {
  return JSON.stringify(terms.map(termQuery));
}

export const SQL = {
  index:
    'SELECT name, size, description FROM entries INDEXED BY entries_live WHERE user_id = ? AND dropped_at IS NULL ORDER BY name',
  // LEFT: an entry whose latest revision is not kept (a history limit of 0) is listed too, by no actor.
  overview: `SELECT e.name, e.size, e.description, e.created, e.updated, e.revision, coalesce(r.actor, '') AS actor, e.opened
       FROM entries e
       LEFT JOIN revisions r ON r.entry_id = e.id AND r.revision = e.revision
       WHERE e.user_id = ? AND e.dropped_at IS NULL ORDER BY e.name`,
  // The row the migration made; were it gone, openings are claimed from now on only.
  openedSince: `SELECT coalesce((SELECT max(at) FROM opened_since), ${SQLITE_NOW_MS})`,
  // A live entry's opening (EntryStore.recordOpened), by entries_live: no counter, revision or search row moves.
  recordOpened: `UPDATE entries SET opened = @at
       WHERE user_id = @user AND name = @name AND dropped_at IS NULL AND (opened IS NULL OR opened < @at - @gap)`,
  // The live entries (entries_search holds only those) with every term anywhere, in any of
  // their parts (search-backlog.ts, SEARCH_PARTS), then ranked: every term in the name, then
  // in the description (searchMatch; both in part 0, at the entry's id), then the latest first.
  search: `SELECT e.name, e.description, ${bodyOf('e')} AS body, e.updated FROM entries e
       WHERE e.id IN (SELECT part.rowid % ${SEARCH_PARTS.stride} FROM json_each(@anywhere) term
           CROSS JOIN entries_search part WHERE part.entries_search MATCH term.value
           GROUP BY 1 HAVING count(DISTINCT term.key) = json_array_length(@anywhere))
         AND e.user_id = @user AND e.dropped_at IS NULL
       ORDER BY e.id IN (SELECT rowid FROM entries_search WHERE entries_search MATCH @inName) DESC,
         e.id IN (SELECT rowid FROM entries_search WHERE entries_search MATCH @inDescription) DESC,
         e.updated DESC, e.name
       LIMIT @limit`,
  optimizeSearch: "INSERT INTO entries_search (entries_search) VALUES ('optimize')",
  live: LIVE,
  // The same read, its row as an array of the columns (prepareStatements): an opening builds its entry from
  // them, where better-sqlite3 building an object per row was a quarter of the read's instructions.
  liveColumns: LIVE,
  allLive: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = ? AND dropped_at IS NULL ORDER BY name`,
  latestTrashed: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = ? AND name = ? AND dropped_at IS NOT NULL
       ORDER BY dropped_at DESC, id DESC LIMIT 1`,
  copies: `SELECT id, user_id, name, description, size, dropped_at FROM entries WHERE user_id = ? AND name = ?`,
  trash: `SELECT ${ENTRY_COLUMNS}, dropped_at, dropped_by FROM entries WHERE user_id = ? AND dropped_at IS NOT NULL
       ORDER BY dropped_at DESC, id DESC`,
  expiredTrash: `SELECT id, user_id, name, description, size, dropped_at FROM entries
       WHERE dropped_at IS NOT NULL AND dropped_at <= ?`,
  // Every counter of the user, for a write to move them from (primitives.ts, addUsage), and for store.usage.
  counters:
    'SELECT total_bytes AS totalBytes, entries, history_bytes AS historyBytes, changes FROM users WHERE user_id = ?',
  users: `SELECT user_id AS user, total_bytes AS totalBytes, entries, history_bytes AS historyBytes
       FROM users WHERE entries > 0 OR history_bytes > 0 ORDER BY user_id`,
  // Every counter moves by delta, never by summing the user's rows. Every change moves the
  // counters, so it moves the user's change counter too (change-feed.ts). No RETURNING: the
  // write knows the counters it moves from (primitives.ts), and a RETURNING clause cost a
  // seventh of a write's SQLite instructions (its rows are buffered in a temporary b-tree).
  // Parameters by position in the statements every write runs (moveUsage, insert, update,
  // addRevision): better-sqlite3 binds a named one by looking its name up in the object
  // passed, a string made and a property read per parameter, which cost a write more CPU
  // than any of these statements' own SQLite work (bench: 91 -> 74 µs per append).
  // Here: bytes, entries, history, user.
  moveUsage: `UPDATE users SET total_bytes = total_bytes + ?, entries = entries + ?,
         history_bytes = history_bytes + ?, changes = changes + 1
       WHERE user_id = ?`,
  // A user's first counters (no row yet); their change counter starts past the floor a load
  // left (dump.ts), never at a number they had. By position: user, bytes, entries, history.
  firstUsage: `INSERT INTO users (user_id, total_bytes, entries, history_bytes, changes)
       VALUES (?, ?, ?, ?, ${CHANGE_FLOOR} + 1)
       RETURNING changes`,
  version: 'SELECT changes FROM users WHERE user_id = ?',
  // A user's revisions newest first (after a position: no position is after every one), by
  // revisions_activity; sizes from the bodies' lengths. One actor's, and the actors, are read
  // from it a stretch at a time (activity-walk.ts).
  activity: `SELECT r.at, r.entry_id AS entry, r.revision, e.name, r.operation, r.actor, r.description,
         octet_length(r.body) AS size
       FROM revisions r INDEXED BY revisions_activity JOIN entries e ON e.id = r.entry_id
       WHERE r.user_id = @user AND (r.at, r.entry_id, r.revision) < (@at, @entry, @revision)
       ORDER BY r.at DESC, r.entry_id DESC, r.revision DESC LIMIT @limit`,
  // By position (moveUsage says why): user, name, description, body, size, created, updated, revision.
  insert: `INSERT INTO entries (user_id, name, description, body, size, created, updated, revision)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  // By position: description, body, size, at, revision, id.
  update: 'UPDATE entries SET description = ?, body = ?, size = ?, updated = ?, revision = ? WHERE id = ?',
  // @body: null where the revision written with the entry holds it (store.ts, persist).
  drop: 'UPDATE entries SET dropped_at = @at, dropped_by = @actor, body = @body, revision = @revision WHERE id = @id',
  undrop: 'UPDATE entries SET dropped_at = NULL, dropped_by = NULL, body = @body, revision = @revision WHERE id = @id',
  deleteEntry: 'DELETE FROM entries WHERE id = ?',
  deleteRevisions: `DELETE FROM revisions WHERE entry_id = ? RETURNING ${REVISION_BYTES} AS bytes`,
  // in_trash is no longer read (schema 10): 0 for every new revision. By position (moveUsage
  // says why): user, id, revision, operation, actor, at, description, body, note.
  addRevision: `INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body, in_trash, note)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
  // Every write of an entry at its history limit trims one revision. Its bytes are summed
  // first, then it is deleted, both bound by position (id, through): a DELETE … RETURNING
  // buffers its rows in a temporary b-tree, and binding by name costs (moveUsage says why).
  trimmedBytes: `SELECT coalesce(sum(${REVISION_BYTES}), 0) FROM revisions WHERE entry_id = ? AND revision <= ?`,
  trimRevisions: 'DELETE FROM revisions WHERE entry_id = ? AND revision <= ?',
  // The history cap's candidates, oldest first: revisions that are not the latest of their
  // entry, then dropped entries whole. Both walk an index of the user's rows in that order;
  // the first skips the latest revision of each entry, live or in the trash.
  olderRevisions: `SELECT r.entry_id AS entry, r.revision, ${revisionBytes('r')} AS bytes
       FROM revisions r INDEXED BY revisions_activity JOIN entries e ON e.id = r.entry_id
       WHERE r.user_id = ? AND r.revision < e.revision
       ORDER BY r.at, r.entry_id, r.revision LIMIT ?`,
  deleteRevision: 'DELETE FROM revisions WHERE entry_id = ? AND revision = ?',
  oldestTrash: `SELECT id, (SELECT coalesce(sum(${REVISION_BYTES}), 0)
         FROM revisions WHERE entry_id = entries.id) AS bytes
       FROM entries INDEXED BY entries_trash WHERE user_id = ? AND dropped_at IS NOT NULL
       ORDER BY dropped_at, id LIMIT ?`,
  revisions:
    'SELECT revision, operation, actor, at, description, body, note FROM revisions WHERE entry_id = ? ORDER BY revision',
  // Every copy's revisions of a name: the live copy by entries_live, the dropped ones by entries_trash.
  timeline: `SELECT r.entry_id AS entry, r.revision, r.operation, r.actor, r.at, r.description, r.body, r.note
       FROM revisions r WHERE r.entry_id IN (
         SELECT id FROM entries WHERE user_id = @user AND name = @name AND dropped_at IS NULL
         UNION ALL SELECT id FROM entries WHERE user_id = @user AND name = @name AND dropped_at IS NOT NULL)
       ORDER BY r.at, r.entry_id, r.revision`,
} as const;

export type Statements = Prepared<typeof SQL>;

/** Each statement of `sql`, prepared on `db`, under its key. */
export type Prepared<T> = { readonly [K in keyof T]: Statement };

export function prepareAll<T extends Record<string, string>>(db: Database, sql: T): Prepared<T> {
  return Object.fromEntries(Object.entries(sql).map(([key, text]) => [key, db.prepare(text)])) as Prepared<T>;
}

export function prepareStatements(db: Database): Statements {
  const statements = prepareAll(db, SQL);
  statements.liveColumns.raw();
  statements.firstUsage.pluck();
  statements.trimmedBytes.pluck();
  return statements;
}
