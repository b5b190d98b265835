/**
 * Every SQL statement the PostgreSQL store runs, each prepared once per connection under
 * its own name. Every query is keyed by user; the index reads only the covering index
 * `entries_live`, never bodies.
 */

import { bodyOf, entryColumns, revisionBytes } from '../sql-rows.js';
import type { Statement } from './driver.js';

/** The time now in ms since the epoch, by PostgreSQL's clock (as migration 11 records it). */
export const POSTGRES_NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

/** Where a user's change counter starts when their row is made (migrations.ts, step 12); 0 where the table is empty. */
export const CHANGE_FLOOR = 'coalesce((SELECT changes FROM change_floor), 0)';

/** What a revision takes against the history cap (sql-rows.ts). */
const REVISION_BYTES = revisionBytes();

/**
 * An entry's search vector (migrations.ts, step 4) from the words of its name, description
 * and body (search-words.ts: searchText, or distinctSearchText, each word once, as writes
 * send them), weighted A, B and C so a search can tell where a word is; `name`,
 * `description` and `body` are SQL expressions of those words.
 */
export function searchVector(name: string, description: string, body: string): string {
  return `setweight(to_tsvector('simple', ${name}), 'A') || setweight(to_tsvector('simple', ${description}), 'B')
    || setweight(to_tsvector('simple', ${body}), 'C')`;
}

/**
 * The search vector `vector` (of an entry as it was) with the words `added` to its body
 * (AppliedChange.appended): those it did not hold, weight C. A search asks only which
 * words an entry holds, and whether in its name (A) or description (B), so this finds
 * what the vector made from the whole text does; making that one parsed every word of
 * the body again on each append, in PostgreSQL and in the server (distinctSearchText).
 */
function appendedVector(vector: string, added: string): string {
  return `${vector} || setweight(ts_delete(to_tsvector('simple', ${added}), tsvector_to_array(${vector})), 'C')`;
}

/**
 * The tsquery of search terms (memory/search.ts): every term, the last as a prefix, each
 * restricted to `weight` when given (A: the name, B: the description). Built as a literal
 * whose lexemes are quoted, never parsed from what was typed: no operator can get in.
 */
export function searchQuery(terms: readonly string[], weight = ''): string {
  return terms
    .map((term, at) => {
      const quoted = `'${term.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
      return `${quoted}:${at === terms.length - 1 ? '*' : ''}${weight}`;
    })
    .join(' & ');
}

/**
 * The parts of a save (saveOver, saveNew): one statement that writes an entry, records its
 * revision, trims its revisions past historyLimit and moves the user's counters — and
 * does all of it only while the user's change counter is still $2, the value the change
 * was decided on (NULL: decided under the user's lock, nothing to check). Another
 * writer's commit in between moves the counter, and the statement writes nothing: it
 * returns no row. Parameters: $1 user, $2 change counter or NULL, $3 $4 $5 the deltas of
 * total bytes, entries and history bytes, $6 description, $7 body, $8 size, $9 time,
 * $10 revision, $11 $12 $13 the distinct words of name, description and body (search-words.ts;
 * in saveOver, for an append, $11 and $12 NULL and $13 the words of the appended text
 * alone: AppliedChange.appended, appendedVector), $14 operation, $15 actor, $16 the
 * entry's id (saveOver) or name (saveNew), $17 the revision to trim through (0: none),
 * $18 the revision's note or NULL. A write's revision records the entry as written
 * (apply.ts), so its text is sent once, and kept once: in the revision, the entry row's body
 * NULL (sql-rows.ts, bodyOf). If historyLimit trims the new revision too, it is not recorded,
 * its bytes leave the history delta again, and the row keeps the body.
 */
const saveParts = (trimmed: string) => ({
  counted: `u AS (
       UPDATE users SET total_bytes = total_bytes + $3::bigint, entries = entries + $4::integer,
         history_bytes = history_bytes + $5::bigint - ${trimmed}
           - CASE WHEN $10::integer <= $17::integer THEN $5::bigint ELSE 0 END,
         changes = changes + 1
       WHERE user_id = $1::text AND ($2::bigint IS NULL OR changes = $2::bigint) RETURNING total_bytes, history_bytes, entries)`,
  recorded: `r AS (
       INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body, in_trash, note)
       SELECT $1, e.id, $10, $14::text, $15::text, $9, $6, $7, false, $18::text FROM e WHERE $10 > $17)`,
});

const SAVE_OVER = saveParts(
  `(SELECT coalesce(sum(${REVISION_BYTES}), 0)::bigint FROM revisions
             WHERE user_id = $1 AND entry_id = $16::bigint AND revision <= $17)`,
);

const SAVE_NEW = saveParts('0');

/** The body a saved entry row keeps (sql-rows.ts, bodyOf): none while its revision, kept, holds it. */
const ROW_BODY = 'CASE WHEN $10::integer <= $17::integer THEN $7::text END';

/** The columns an entry is read by, in the order of EntryRow (sql-rows.ts), of entries and of entries aliased `e`. */
const ENTRY_COLUMNS = entryColumns('entries');
const E_COLUMNS = entryColumns('e');

/** The (user, name) pairs of a batch of reads (batch.ts): $1 the users, $2 the names, pair by pair. */
const WANTED = 'unnest($1::text[], $2::text[]) AS k (user_id, name)';

export const SQL = {
  index: 'SELECT name, size, description FROM entries WHERE user_id = $1 AND dropped_at IS NULL ORDER BY name',
  // LEFT: an entry whose latest revision is not kept (a history limit of 0) is listed too, by no actor.
  overview: `SELECT e.name, e.size, e.description, e.created, e.updated, e.revision, coalesce(r.actor, '') AS actor, e.opened
       FROM entries e
       LEFT JOIN revisions r ON r.user_id = e.user_id AND r.entry_id = e.id AND r.revision = e.revision
       WHERE e.user_id = $1 AND e.dropped_at IS NULL ORDER BY e.name`,
  // The row the migration made; were it gone, openings are claimed from now on only.
  openedSince: `SELECT coalesce((SELECT max(at) FROM opened_since), ${POSTGRES_NOW_MS}) AS at`,
  // Live entries' openings (EntryStore.recordOpened), by entries_live: $1 users, $2 names,
  // $3 times, pair by pair; $4 the least gap. No counter or revision moves, and no index
  // holds opened: a HOT update of each row. A row another transaction holds is skipped,
  // its opening noted no more (it is approximate): a user's writes that share one commit
  // (shared-commit.ts) hold several of its entries' rows, in the order they came, and
  // waiting for them here could close a circle; rows are taken in (user, name) order, so
  // two servers noting the same entries never wait on each other either.
  recordOpened: `UPDATE entries e SET opened = o.at
     FROM (SELECT e.user_id, e.id, k.at FROM unnest($1::text[], $2::text[], $3::bigint[]) AS k (user_id, name, at)
       JOIN entries e ON e.user_id = k.user_id AND e.name = k.name AND e.dropped_at IS NULL
       WHERE e.opened IS NULL OR e.opened < k.at - $4::bigint
       ORDER BY e.user_id, e.name FOR UPDATE OF e SKIP LOCKED) AS o
     WHERE e.user_id = o.user_id AND e.id = o.id`,
  // $2: every term anywhere; $3: every term in the name; $4: every term in the description (searchQuery).
  search: `SELECT name, description, ${bodyOf('entries')} AS body, updated FROM entries
     WHERE user_id = $1 AND dropped_at IS NULL AND search @@ $2::tsquery
     ORDER BY search @@ $3::tsquery DESC, search @@ $4::tsquery DESC, updated DESC, name LIMIT $5`,
  live: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = $1 AND name = $2 AND dropped_at IS NULL`,
  // The live entries of several users' names at once (a batch of reads), each by entries_live.
  // PostgreSQL plans a statement over unnest() anew at every execution (its generic plan
  // guesses 10 rows, so the custom plan of the actual arrays always looks cheaper): a batch
  // of one is read by `live` instead, whose generic plan is kept after five executions.
  // The user comes last (LIVE_OF_USER), after the entry's columns, in the order toEntryFromColumns reads.
  liveOf: `SELECT ${E_COLUMNS}, k.user_id AS "user" FROM ${WANTED}
     JOIN entries e ON e.user_id = k.user_id AND e.name = k.name AND e.dropped_at IS NULL`,
  allLive: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = $1 AND dropped_at IS NULL ORDER BY name`,
  // Locked, so that purging expired trash cannot delete it while it is being restored.
  latestTrashed: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = $1 AND name = $2 AND dropped_at IS NOT NULL
     ORDER BY dropped_at DESC, id DESC LIMIT 1 FOR UPDATE`,
  trash: `SELECT ${ENTRY_COLUMNS}, dropped_at, dropped_by FROM entries WHERE user_id = $1 AND dropped_at IS NOT NULL
     ORDER BY dropped_at DESC, id DESC`,
  // The users row is the lock that serialises every write of one user, across servers.
  // A user's first row starts their change counter at the floor a load left (migrations.ts, step 12).
  ensureUser: `INSERT INTO users (user_id, changes) VALUES ($1, ${CHANGE_FLOOR}) ON CONFLICT (user_id) DO NOTHING`,
  lockUser: 'SELECT total_bytes AS "totalBytes", entries, changes FROM users WHERE user_id = $1 FOR UPDATE',
  // Writes decided without the lock (a batch of them): each user's counters and the live entry of
  // the name (or NULLs), from one snapshot; a user not yet known has no row.
  readForWrite: `SELECT k.user_id AS "user", k.name AS wanted, u.changes, u.total_bytes AS "totalBytes", u.entries,
       u.history_bytes, ${E_COLUMNS}
     FROM ${WANTED} JOIN users u ON u.user_id = k.user_id
       LEFT JOIN entries e ON e.user_id = k.user_id AND e.name = k.name AND e.dropped_at IS NULL`,
  // readForWrite of one user's name: a plan kept from one execution to the next (liveOf says why).
  readOneForWrite: `SELECT u.user_id AS "user", $2::text AS wanted, u.changes, u.total_bytes AS "totalBytes", u.entries,
       u.history_bytes, ${E_COLUMNS}
     FROM users u LEFT JOIN entries e ON e.user_id = u.user_id AND e.name = $2 AND e.dropped_at IS NULL
     WHERE u.user_id = $1`,
  usage: 'SELECT total_bytes AS "totalBytes", entries FROM users WHERE user_id = $1',
  users: `SELECT user_id AS "user", total_bytes AS "totalBytes", entries, history_bytes AS "historyBytes"
     FROM users WHERE entries > 0 OR history_bytes > 0 ORDER BY user_id COLLATE "C"`,
  // Every counter moves by delta, never by summing the user's rows; the history is returned for the cap.
  // Every change moves the counters, so it moves the user's change counter too (change-feed.ts).
  addUsage: `UPDATE users SET total_bytes = total_bytes + $2, entries = entries + $3, history_bytes = history_bytes + $4,
       changes = changes + 1
     WHERE user_id = $1 RETURNING history_bytes, entries`,
  // A user without a row reads as the floor their row would start at: taking their lock makes
  // the row (ensureUser) whether or not the change goes through, and a watcher must not be
  // told a change where a write changed nothing.
  versions: `SELECT k.user_id AS "user", coalesce(u.changes, ${CHANGE_FLOOR}) AS changes
     FROM unnest($1::text[]) AS k (user_id) LEFT JOIN users u ON u.user_id = k.user_id`,
  // A user's revisions newest first, after a position (NEWEST is after every one), by
  // revisions_activity, or revisions_actor for one actor's; sizes from the bodies' lengths
  // (a TOASTed body's length is read from its header, never detoasted).
  activity: `SELECT r.at, r.entry_id AS entry, r.revision, e.name, r.operation, r.actor, r.description,
       octet_length(r.body) AS size
     FROM revisions r JOIN entries e ON e.user_id = r.user_id AND e.id = r.entry_id
     WHERE r.user_id = $1 AND (r.at, r.entry_id, r.revision) < ($2::bigint, $3::bigint, $4::integer)
     ORDER BY r.at DESC, r.entry_id DESC, r.revision DESC LIMIT $5`,
  activityOf: `SELECT r.at, r.entry_id AS entry, r.revision, e.name, r.operation, r.actor, r.description,
       octet_length(r.body) AS size
     FROM revisions r JOIN entries e ON e.user_id = r.user_id AND e.id = r.entry_id
     WHERE r.user_id = $1 AND r.actor = $6 AND (r.at, r.entry_id, r.revision) < ($2::bigint, $3::bigint, $4::integer)
     ORDER BY r.at DESC, r.entry_id DESC, r.revision DESC LIMIT $5`,
  actors: `SELECT actor, count(*)::integer AS changes, max(at) AS last FROM revisions WHERE user_id = $1
     GROUP BY actor ORDER BY changes DESC, actor COLLATE "C"`,
  // A write over the live entry $16, or of a new entry named $16 (see saveParts); xid: the
  // id of the transaction that wrote it, already assigned by its writes (shared-commit.ts).
  saveOver: `WITH ${SAVE_OVER.counted},
     e AS (
       UPDATE entries SET description = $6, body = ${ROW_BODY}, size = $8, updated = $9, revision = $10,
         search = CASE WHEN $11::text IS NULL THEN ${appendedVector('search', '$13::text')}
           ELSE ${searchVector('$11::text', '$12::text', '$13::text')} END
       WHERE user_id = $1 AND id = $16 AND EXISTS (SELECT FROM u) RETURNING id),
     ${SAVE_OVER.recorded},
     t AS (DELETE FROM revisions WHERE user_id = $1 AND entry_id = $16 AND revision <= $17 AND EXISTS (SELECT FROM u))
     SELECT e.id, u.total_bytes, u.history_bytes, u.entries, txid_current()::text AS xid FROM u, e`,
  saveNew: `WITH ${SAVE_NEW.counted},
     e AS (
       INSERT INTO entries (user_id, name, description, body, size, created, updated, revision, search)
       SELECT $1, $16::text, $6::text, ${ROW_BODY}, $8::integer, $9::bigint, $9::bigint, $10::integer,
         ${searchVector('$11::text', '$12::text', '$13::text')}
       FROM u RETURNING id),
     ${SAVE_NEW.recorded}
     SELECT e.id, u.total_bytes, u.history_bytes, u.entries, txid_current()::text AS xid FROM u, e`,
  // $6, $4: the body the row keeps, NULL where the revision recorded with it holds it (engine/writes.ts).
  drop: `UPDATE entries SET dropped_at = $3, dropped_by = $4, revision = $5, body = $6::text
     WHERE user_id = $1 AND id = $2`,
  undrop: `UPDATE entries SET dropped_at = NULL, dropped_by = NULL, revision = $3, body = $4::text
     WHERE user_id = $1 AND id = $2`,
  // in_trash: the revision a drop records stays the latest of its entry while the entry is in the trash.
  addRevision: `INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body, in_trash, note)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $4 = 'drop', $9)`,
  leaveTrash: 'UPDATE revisions SET in_trash = false WHERE user_id = $1 AND entry_id = $2 AND revision = $3',
  trimRevisions: `DELETE FROM revisions WHERE user_id = $1 AND entry_id = $2 AND revision <= $3 RETURNING ${REVISION_BYTES} AS bytes`,
  // The history cap's candidates, oldest first: revisions that are not the latest of their
  // entry, then dropped entries whole (by entries_trash). The first reads the user's oldest
  // $3 revisions by the index revisions_age, the trash left out: with $3 = the live entries
  // + $2, at most one latest revision per live entry among them, so $2 candidates if there are.
  olderRevisions: `SELECT r.entry_id AS entry, r.revision, ${revisionBytes('r')} AS bytes
     FROM (SELECT entry_id, revision, at, description, body FROM revisions
           WHERE user_id = $1 AND NOT in_trash ORDER BY at, entry_id, revision LIMIT $3) r
       JOIN entries e ON e.user_id = $1 AND e.id = r.entry_id
     WHERE r.revision < e.revision ORDER BY r.at, r.entry_id, r.revision LIMIT $2`,
  deleteRevisionsAmong: `DELETE FROM revisions
     WHERE user_id = $1 AND (entry_id, revision) IN (SELECT * FROM unnest($2::bigint[], $3::integer[]))`,
  oldestTrash: `SELECT id, (SELECT coalesce(sum(${revisionBytes('r')}), 0)
       FROM revisions r WHERE r.user_id = e.user_id AND r.entry_id = e.id) AS bytes
     FROM entries e WHERE e.user_id = $1 AND e.dropped_at IS NOT NULL ORDER BY e.dropped_at, e.id LIMIT $2`,
  // Revisions go with their entry (ON DELETE CASCADE); every part of one statement sees the
  // rows as they were before it, so the revisions' bytes are summed as they are deleted.
  deleteCopies: `WITH gone AS (DELETE FROM entries WHERE user_id = $1 AND id = ANY ($2::bigint[]) RETURNING id)
     SELECT coalesce(sum(${REVISION_BYTES}), 0)::bigint AS bytes FROM revisions r
     WHERE r.user_id = $1 AND r.entry_id IN (SELECT id FROM gone)`,
  // The live copy if there is one, else the most recently dropped.
  history: `SELECT revision, operation, actor, at, description, body, note FROM revisions
     WHERE user_id = $1 AND entry_id = (
       SELECT id FROM entries WHERE user_id = $1 AND name = $2 ORDER BY dropped_at DESC NULLS FIRST, id DESC LIMIT 1)
     ORDER BY revision`,
  // Every copy's revisions of a name (by entries_copies), oldest first.
  timeline: `SELECT r.entry_id AS entry, r.revision, r.operation, r.actor, r.at, r.description, r.body, r.note
     FROM revisions r JOIN entries e ON e.user_id = r.user_id AND e.id = r.entry_id
     WHERE e.user_id = $1 AND e.name = $2 ORDER BY r.at, r.entry_id, r.revision`,
  // What a purge deletes: the user's dropped copies of a name, and the live one with $3.
  copies: `SELECT id, user_id AS "user", name, description, size, dropped_at IS NOT NULL AS dropped FROM entries
     WHERE user_id = $1 AND name = $2 AND ($3::boolean OR dropped_at IS NOT NULL)`,
  // The users whose trash expired, locked in one order (as writers lock them) before it is purged.
  lockExpiredUsers: `SELECT user_id FROM users WHERE user_id IN (
       SELECT user_id FROM entries WHERE dropped_at IS NOT NULL AND dropped_at <= $1)
     ORDER BY user_id FOR UPDATE`,
  expiredTrash: `SELECT id, user_id AS "user", name, description, size, true AS dropped FROM entries
     WHERE dropped_at IS NOT NULL AND dropped_at <= $1`,
} as const;

/** The statement `key` with its parameters, prepared once per connection. */
export function statement(key: keyof typeof SQL, ...values: unknown[]): Statement {
  return { name: `engram_${key}`, text: SQL[key], values };
}

/**
 * The statement `key` with its parameters, its rows read as arrays of their columns: no
 * object built and keyed column by column for each row, for reads that take the columns
 * by their place (sql-rows.ts, toEntryFromColumns).
 */
export function columnsStatement(key: keyof typeof SQL, ...values: unknown[]): Statement {
  return { name: `engram_${key}`, text: SQL[key], values, rowMode: 'array' };
}

/** Where liveOf's row holds the user whose entry it is: after the entry's columns (entryColumns). */
export const LIVE_OF_USER = 8;

/** `deletion` (a DELETE without RETURNING) as a query of one row: `count`, how many rows it removed. */
export function countDeleted(deletion: string): string {
  return `WITH gone AS (${deletion} RETURNING 1) SELECT count(*)::integer AS count FROM gone`;
}
