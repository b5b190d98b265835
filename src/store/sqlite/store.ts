/**
 * The embedded default: one SQLite file through better-sqlite3. WAL with
 * synchronous=FULL, so an acknowledged write survives power loss; every write in
 * BEGIN IMMEDIATE with a busy timeout, so several processes (stdio servers, the CLI,
 * `engram serve`) can share one file and no update is lost.
 */

import Database from 'better-sqlite3';
import type { IndexRow } from '../../core/format.js';
import type { Actor, Decide, MutationResult, Store, StoredEntry } from '../../core/store.js';
import { utf8Bytes } from '../../core/text.js';
import { prepareDatabaseFile } from './file.js';
import { MIGRATIONS } from './migrations.js';

export interface SqliteStoreOptions {
  /** Database file; `:memory:` for a private in-memory database. */
  readonly path: string;
  /** How long a writer waits for another process's transaction, in ms. */
  readonly busyTimeoutMs?: number;
  /** Clock in milliseconds; tests inject one. */
  readonly now?: () => number;
}

interface EntryRow {
  id: number;
  name: string;
  description: string;
  body: string;
  size: number;
  created: number;
  updated: number;
  revision: number;
}

export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly now: () => number;
  private readonly statements;
  private readonly applyMutation;

  constructor(options: SqliteStoreOptions) {
    prepareDatabaseFile(options.path);
    this.db = new Database(options.path, { timeout: options.busyTimeoutMs ?? 10_000 });
    this.now = options.now ?? Date.now;
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('foreign_keys = ON');
    migrate(this.db);
    this.statements = prepareStatements(this.db);
    this.applyMutation = this.db.transaction(this.mutateInTransaction.bind(this));
  }

  async index(user: string): Promise<IndexRow[]> {
    return this.statements.index.all(user) as IndexRow[];
  }

  async get(user: string, names: readonly string[]): Promise<StoredEntry[]> {
    return names.flatMap((name) => {
      const row = this.statements.live.get(user, name) as EntryRow | undefined;
      return row ? [toEntry(row)] : [];
    });
  }

  async mutate(actor: Actor, name: string, decide: Decide): Promise<MutationResult> {
    return this.applyMutation.immediate(actor, name, decide);
  }

  private mutateInTransaction(actor: Actor, name: string, decide: Decide): MutationResult {
    const s = this.statements;
    const row = s.live.get(actor.user, name) as EntryRow | undefined;
    const usage = s.usage.get(actor.user) as { total_bytes: number } | undefined;
    const before = row ? toEntry(row) : undefined;
    const change = decide(before, { totalBytes: usage?.total_bytes ?? 0 });
    if (change.kind === 'none') return { before, after: before };
    const at = this.now();
    if (change.kind === 'drop') {
      if (!row) return { before, after: undefined };
      const revision = row.revision + 1;
      s.drop.run({ id: row.id, at, actor: actor.label, revision });
      s.addRevision.run({
        id: row.id,
        revision,
        operation: 'drop',
        actor: actor.label,
        at,
        description: row.description,
        body: row.body,
      });
      s.addUsage.run({ user: actor.user, delta: -row.size });
      return { before, after: undefined };
    }
    const size = utf8Bytes(change.body);
    let id: number;
    let revision: number;
    if (row) {
      id = row.id;
      revision = row.revision + 1;
      s.update.run({ id, description: change.description, body: change.body, size, at, revision });
    } else {
      revision = 1;
      id = Number(
        s.insert.run({ user: actor.user, name, description: change.description, body: change.body, size, at })
          .lastInsertRowid,
      );
    }
    s.addRevision.run({
      id,
      revision,
      operation: change.operation,
      actor: actor.label,
      at,
      description: change.description,
      body: change.body,
    });
    s.addUsage.run({ user: actor.user, delta: size - (row?.size ?? 0) });
    const after: StoredEntry = {
      name,
      description: change.description,
      body: change.body,
      size,
      created: row?.created ?? at,
      updated: at,
      revision,
    };
    return { before, after };
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

function toEntry(row: EntryRow): StoredEntry {
  const { name, description, body, size, created, updated, revision } = row;
  return { name, description, body, size, created, updated, revision };
}

function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  db.transaction(() => {
    const row = db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
    const current = row?.version ?? 0;
    if (current > MIGRATIONS.length) {
      throw new Error(
        `this database is at schema version ${current}, newer than this Engram knows (${MIGRATIONS.length}): upgrade Engram`,
      );
    }
    for (const step of MIGRATIONS.slice(current)) db.exec(step);
    if (!row) db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(MIGRATIONS.length);
    else if (current < MIGRATIONS.length) db.prepare('UPDATE schema_version SET version = ?').run(MIGRATIONS.length);
  }).immediate();
}

function prepareStatements(db: Database.Database) {
  return {
    index: db.prepare(
      'SELECT name, size, description FROM entries INDEXED BY entries_index WHERE user_id = ? AND dropped_at IS NULL ORDER BY name',
    ),
    live: db.prepare(
      'SELECT id, name, description, body, size, created, updated, revision FROM entries WHERE user_id = ? AND name = ? AND dropped_at IS NULL',
    ),
    usage: db.prepare('SELECT total_bytes FROM users WHERE user_id = ?'),
    addUsage: db.prepare(
      `INSERT INTO users (user_id, total_bytes) VALUES (@user, @delta)
       ON CONFLICT (user_id) DO UPDATE SET total_bytes = total_bytes + @delta`,
    ),
    insert: db.prepare(
      `INSERT INTO entries (user_id, name, description, body, size, created, updated, revision)
       VALUES (@user, @name, @description, @body, @size, @at, @at, 1)`,
    ),
    update: db.prepare(
      `UPDATE entries SET description = @description, body = @body, size = @size, updated = @at, revision = @revision
       WHERE id = @id`,
    ),
    drop: db.prepare('UPDATE entries SET dropped_at = @at, dropped_by = @actor, revision = @revision WHERE id = @id'),
    addRevision: db.prepare(
      `INSERT INTO revisions (entry_id, revision, operation, actor, at, description, body)
       VALUES (@id, @revision, @operation, @actor, @at, @description, @body)`,
    ),
  };
}
