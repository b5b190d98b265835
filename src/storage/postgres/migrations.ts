/**
 * The PostgreSQL schema, as an ordered list of forward migrations, applied in one
 * transaction under an advisory lock: when several servers start at once on an empty
 * database, one migrates while the others wait, then find nothing left to do. Never
 * edit a shipped step: append a new one.
 *
 * Every table carries user_id and every key starts with it, so the schema can be
 * sharded by user (e.g. Citus, user_id as distribution column) as it stands.
 */

import { searchText } from '../../memory/model/search-words.js';
import { newerSchemaError } from '../newer-schema.js';
import type { Queryable } from './driver.js';
import { searchVector } from './statements.js';

/** One step: SQL, or work that needs this program too (the words search-words.ts makes). */
export type Migration = string | ((db: Queryable) => Promise<void>);

export const MIGRATIONS: readonly Migration[] = [
  // 1: entries (live and dropped), per-user usage, every revision, and bearer tokens.
  `
  CREATE TABLE users (
    user_id     text PRIMARY KEY,
    total_bytes bigint NOT NULL DEFAULT 0
  );

  CREATE TABLE entries (
    id          bigint GENERATED ALWAYS AS IDENTITY,
    user_id     text NOT NULL,
    -- "C" collation: names sort in code-point order, as on every backend.
    name        text COLLATE "C" NOT NULL,
    description text NOT NULL,
    size        integer NOT NULL,
    body        text NOT NULL,
    created     bigint NOT NULL,
    updated     bigint NOT NULL,
    revision    integer NOT NULL,
    dropped_at  bigint,
    dropped_by  text,
    PRIMARY KEY (user_id, id)
  );

  -- One live entry per name; the index is served from this covering index alone (Index Only Scan).
  CREATE UNIQUE INDEX entries_live ON entries (user_id, name) INCLUDE (size, description) WHERE dropped_at IS NULL;
  -- Every copy of a name, live or dropped: history, undrop, purge.
  CREATE INDEX entries_copies ON entries (user_id, name);
  -- The trash of one user, and expired trash across users.
  CREATE INDEX entries_trash ON entries (user_id, dropped_at) WHERE dropped_at IS NOT NULL;
  CREATE INDEX entries_expiry ON entries (dropped_at) WHERE dropped_at IS NOT NULL;

  CREATE TABLE revisions (
    user_id     text NOT NULL,
    entry_id    bigint NOT NULL,
    revision    integer NOT NULL,
    operation   text NOT NULL,
    actor       text NOT NULL,
    at          bigint NOT NULL,
    description text NOT NULL,
    body        text NOT NULL,
    PRIMARY KEY (user_id, entry_id, revision),
    FOREIGN KEY (user_id, entry_id) REFERENCES entries (user_id, id) ON DELETE CASCADE
  );

  -- Only the SHA-256 of each secret is kept.
  CREATE TABLE tokens (
    id        text PRIMARY KEY,
    user_id   text NOT NULL,
    label     text NOT NULL,
    read_only boolean NOT NULL,
    hash      text NOT NULL UNIQUE,
    created   bigint NOT NULL,
    last_used bigint
  );
  `,
  // 2: usage counts names and descriptions too, the live entries, and the history's bytes
  // (kept by delta on every write, recomputed here for what is stored). in_trash marks the
  // latest revision of a dropped entry, so that the revisions the history cap trims first
  // are found by an index that the trash does not clog.
  `
  ALTER TABLE users
    ADD COLUMN entries integer NOT NULL DEFAULT 0,
    ADD COLUMN history_bytes bigint NOT NULL DEFAULT 0;

  ALTER TABLE revisions ADD COLUMN in_trash boolean NOT NULL DEFAULT false;
  UPDATE revisions SET in_trash = true FROM entries
    WHERE entries.user_id = revisions.user_id AND entries.id = revisions.entry_id
      AND entries.dropped_at IS NOT NULL AND entries.revision = revisions.revision;
  -- A user's revisions oldest first, the trash left out: what the history cap trims first.
  CREATE INDEX revisions_age ON revisions (user_id, at, entry_id, revision) WHERE NOT in_trash;
  -- A user's trash in the order it is listed and purged (by time, then id), so that the
  -- cap's purge of the oldest reads that user's index only, not everyone's trash.
  DROP INDEX entries_trash;
  CREATE INDEX entries_trash ON entries (user_id, dropped_at, id) WHERE dropped_at IS NOT NULL;

  INSERT INTO users (user_id) SELECT DISTINCT user_id FROM entries ON CONFLICT (user_id) DO NOTHING;
  UPDATE users SET
    total_bytes = coalesce((
      SELECT sum(octet_length(name) + octet_length(description) + size)
      FROM entries WHERE entries.user_id = users.user_id AND dropped_at IS NULL), 0),
    entries = (SELECT count(*) FROM entries WHERE entries.user_id = users.user_id AND dropped_at IS NULL),
    history_bytes = coalesce((
      SELECT sum(octet_length(description) + octet_length(body))
      FROM revisions WHERE revisions.user_id = users.user_id), 0);
  `,
  // 3: remote sign-in (account-store.ts): accounts, browser sessions, registered OAuth
  // clients, grants and their secrets. Every secret is kept as its SHA-256 only; a grant's
  // secrets go with it (ON DELETE CASCADE), so revoking is one statement. Sessions and
  // secrets are found by hash before their user is known, so these small tables are keyed
  // by id or hash, not by user (sharded, they would be reference tables).
  `
  CREATE TABLE accounts (
    user_id       text PRIMARY KEY,
    password_hash text,
    created       bigint NOT NULL,
    updated       bigint NOT NULL
  );

  CREATE TABLE sessions (
    id        text PRIMARY KEY,
    hash      text NOT NULL UNIQUE,
    user_id   text NOT NULL,
    agent     text NOT NULL,
    created   bigint NOT NULL,
    expires   bigint NOT NULL,
    last_used bigint
  );
  CREATE INDEX sessions_user ON sessions (user_id, created);
  CREATE INDEX sessions_expiry ON sessions (expires);

  CREATE TABLE oauth_clients (
    id            text PRIMARY KEY,
    name          text NOT NULL,
    -- A JSON array of strings.
    redirect_uris text NOT NULL,
    created       bigint NOT NULL,
    metadata      text NOT NULL
  );

  CREATE TABLE grants (
    id          text PRIMARY KEY,
    user_id     text NOT NULL,
    client_id   text NOT NULL,
    client_name text NOT NULL,
    read_only   boolean NOT NULL,
    resource    text NOT NULL,
    created     bigint NOT NULL,
    last_used   bigint
  );
  CREATE INDEX grants_user ON grants (user_id);

  CREATE TABLE grant_secrets (
    hash     text PRIMARY KEY,
    grant_id text NOT NULL REFERENCES grants (id) ON DELETE CASCADE,
    kind     text NOT NULL,
    created  bigint NOT NULL,
    expires  bigint NOT NULL,
    used     bigint,
    data     text NOT NULL
  );
  CREATE INDEX grant_secrets_grant ON grant_secrets (grant_id);
  CREATE INDEX grant_secrets_expiry ON grant_secrets (expires);
  `,
  // 4: full-text search of live entries (memory/search.ts): each entry's search vector, the
  // words of its name (weight A), description (B) and body (C) as search-words.ts folds
  // them (the parser of the 'simple' configuration would make "example.com" or "a/b" one
  // word, and keep accents), written with the text by the same statements, so in the same
  // transaction; a GIN index of the live entries' vectors.
  async (db) => {
    await db.query({ text: 'ALTER TABLE entries ADD COLUMN search tsvector' });
    await fillSearch(db);
    await db.query({
      text: `ALTER TABLE entries ALTER COLUMN search SET NOT NULL;
        CREATE INDEX entries_search ON entries USING gin (search) WHERE dropped_at IS NULL;`,
    });
  },
  // 5: activity (memory/activity.ts): a user's revisions newest first, all of them or one
  // actor's, read by index however long the history grows; and each user's change counter,
  // moved in the transaction of every change, which watchers poll (storage/change-feed.ts).
  `
  ALTER TABLE users ADD COLUMN changes bigint NOT NULL DEFAULT 0;
  CREATE INDEX revisions_activity ON revisions (user_id, at, entry_id, revision);
  CREATE INDEX revisions_actor ON revisions (user_id, actor, at, entry_id, revision);
  `,
  // 6: the grants of one OAuth client, by index: forgetting unused clients (grants.ts) asks
  // of every old client whether any grant still names it.
  'CREATE INDEX grants_client ON grants (client_id);',
  // 7: when the consent page was last shown for each registered client (ms, NULL if never):
  // at the registration cap, a client a person may be deciding about is not pushed out.
  'ALTER TABLE oauth_clients ADD COLUMN shown bigint;',
  // 8: each body stored once, in its revision, as SQLite does (its step 11): an entry's body
  // is NULL where its latest revision holds the same text (every entry Engram writes), and
  // kept only where none does (entries written by hand, or past a history limit of 0), so
  // not a byte is lost; statements read it through bodyOf (sql-rows.ts). One data model
  // for both SQL backends, and each body's bytes once in the table and its TOAST.
  `
  ALTER TABLE entries ALTER COLUMN body DROP NOT NULL;
  UPDATE entries e SET body = NULL FROM revisions r
    WHERE r.user_id = e.user_id AND r.entry_id = e.id AND r.revision = e.revision AND r.body = e.body;
  `,
  // 9: a revision may carry a note naming why it was made (a revert, memory/revert.ts): NULL for
  // every other change, as SQLite's step 17. A revert's revisions carry its id in the note.
  'ALTER TABLE revisions ADD COLUMN note text;',
  // 10: changes held for review (memory/review.ts), as SQLite's step 18: a token or connected app may be in review
  // mode, and its writes and drops wait in proposals, a user's in the order they came,
  // until the user approves or rejects them or they expire (by age, across users).
  `
  ALTER TABLE tokens ADD COLUMN review boolean NOT NULL DEFAULT false;
  ALTER TABLE grants ADD COLUMN review boolean NOT NULL DEFAULT false;
  CREATE TABLE proposals (
    user_id              text NOT NULL,
    id                   text NOT NULL,
    name                 text NOT NULL,
    operation            text NOT NULL,
    description          text,
    new_text             text,
    old_text             text,
    base_revision        integer NOT NULL,
    proposed_description text NOT NULL,
    proposed_body        text NOT NULL,
    actor                text NOT NULL,
    at                   bigint NOT NULL,
    PRIMARY KEY (user_id, id)
  );
  CREATE INDEX proposals_waiting ON proposals (user_id, at, id);
  CREATE INDEX proposals_age ON proposals (at);
  `,
  // 11: when a model last opened each entry (ms, NULL: not since), noted at most once an hour
  // (memory/opened.ts), and since when that is recorded, as SQLite's step 19. No index holds
  // opened, so noting an opening is a HOT update: no index of the row is written again.
  `
  ALTER TABLE entries ADD COLUMN opened bigint;
  CREATE TABLE opened_since (at bigint NOT NULL);
  INSERT INTO opened_since (at) VALUES ((extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  `,
  // 12: where a user's change counter starts when their row is made (storage/change-feed.ts),
  // as SQLite keeps in its user_version: past every counter a load replaced (dump.ts), so a
  // user a load left out never meets a number again that a watcher or another server's
  // write cache (write-cache.ts) knew before the load; a restart at 1 let a server's stale
  // view of such a user pass the check of its save and write over another entry. Started at
  // the highest counter the database holds now, so a user's first change goes past it. One
  // row, keyed (a table without a key could not be replicated logically).
  `
  CREATE TABLE change_floor (one boolean PRIMARY KEY DEFAULT true CHECK (one), changes bigint NOT NULL);
  INSERT INTO change_floor (changes) SELECT coalesce(max(changes), 0) FROM users;
  `,
];

/** Rows per batch of the search vectors' backfill. */
const FILL_BATCH = 500;

/** Computes the search vector of every entry, live or dropped (an undrop does not rewrite it). */
async function fillSearch(db: Queryable): Promise<void> {
  type Row = { user_id: string; id: number; name: string; description: string; body: string };
  for (let after = 0; ; ) {
    const { rows } = await db.query<Row>({
      text: 'SELECT user_id, id, name, description, body FROM entries WHERE id > $1 ORDER BY id LIMIT $2',
      values: [after, FILL_BATCH],
    });
    if (rows.length === 0) return;
    await db.query({
      text: `UPDATE entries e SET search = ${searchVector('w.name', 'w.description', 'w.body')}
        FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[]) AS w (user_id, id, name, description, body)
        WHERE e.user_id = w.user_id AND e.id = w.id`,
      values: [
        rows.map((row) => row.user_id),
        rows.map((row) => row.id),
        rows.map((row) => searchText(row.name)),
        rows.map((row) => searchText(row.description)),
        rows.map((row) => searchText(row.body)),
      ],
    });
    after = rows[rows.length - 1]!.id;
  }
}

/** Key of the advisory lock that serialises migrations across servers ("engram" in ASCII). */
const MIGRATION_LOCK = 0x656e6772616d;

/** Brings the database to the newest schema; `transaction` runs the work in one transaction. */
export async function migrate(transaction: (work: (db: Queryable) => Promise<void>) => Promise<void>): Promise<void> {
  await transaction(async (db) => {
    await db.query({ text: 'SELECT pg_advisory_xact_lock($1)', values: [MIGRATION_LOCK] });
    await db.query({ text: 'CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)' });
    const { rows } = await db.query<{ version: number }>({ text: 'SELECT version FROM schema_version' });
    const current = rows[0]?.version ?? 0;
    if (current > MIGRATIONS.length) {
      const { rows: named } = await db.query<{ name: string }>({ text: 'SELECT current_database() AS name' });
      throw newerSchemaError(`The PostgreSQL database ${named[0]?.name}`, current, MIGRATIONS.length);
    }
    if (current === MIGRATIONS.length) return;
    for (const step of MIGRATIONS.slice(current)) {
      if (typeof step === 'string') await db.query({ text: step });
      else await step(db);
    }
    await db.query(
      rows.length === 0
        ? { text: 'INSERT INTO schema_version (version) VALUES ($1)', values: [MIGRATIONS.length] }
        : { text: 'UPDATE schema_version SET version = $1', values: [MIGRATIONS.length] },
    );
  });
}
