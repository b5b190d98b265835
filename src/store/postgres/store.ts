/**
 * The store for teams: one PostgreSQL database behind any number of stateless Engram
 * servers. Every write is one transaction that first locks the user's `users` row
 * (SELECT … FOR UPDATE), so writers of one user queue up across servers and no update
 * is lost; other users' writes run in parallel. Same data model as SQLite: live and
 * dropped entries in one `entries` table, usage in `users`, revisions per entry.
 */

import { EngramError } from '../../core/errors.js';
import type { IndexRow } from '../../core/format.js';
import type {
  Actor,
  Change,
  Decide,
  DecideAll,
  LoadOptions,
  MutationResult,
  RevisionRecord,
  Store,
  StoreDump,
  StoredEntry,
  TrashedEntry,
  UndropResult,
  Usage,
} from '../../core/store.js';
import { utf8Bytes } from '../../core/text.js';
import { type EntryRow, type TrashRow, toEntry, toTrashedEntry } from '../sql-rows.js';
import { dumpDatabase, isEmpty, loadDatabase } from './dump.js';
import { migrate } from './migrations.js';
import { createPool, type Pool, type PoolOptions, type Queryable, type Statement, serverAddress } from './pool.js';
import { statement } from './statements.js';
import { PostgresTokenStore } from './tokens.js';
import { callDecide, Runner } from './transaction.js';

export interface PostgresStoreOptions extends PoolOptions {
  /** Revisions kept per entry; older ones are deleted as new ones arrive. */
  readonly historyLimit?: number;
  /** Clock in milliseconds; tests inject one. */
  readonly now?: () => number;
}

export class PostgresStore implements Store {
  private readonly now: () => number;
  private readonly historyLimit: number;
  private closed = false;
  readonly tokens: PostgresTokenStore;

  /** Connects and brings the schema up to date; an unreachable database is a STORE_UNAVAILABLE error. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const pool = createPool(options);
    const db = new Runner(pool, serverAddress(options.connectionString));
    try {
      await migrate((work) => db.transaction(work));
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return new PostgresStore(pool, db, options);
  }

  private constructor(
    private readonly pool: Pool,
    private readonly db: Runner,
    options: PostgresStoreOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.historyLimit = options.historyLimit ?? 100;
    this.tokens = new PostgresTokenStore(db);
  }

  async index(user: string): Promise<IndexRow[]> {
    return this.db.query<IndexRow>(statement('index', user));
  }

  async get(user: string, names: readonly string[]): Promise<StoredEntry[]> {
    if (names.length === 0) return [];
    return (await this.db.query<EntryRow>(statement('liveAmong', user, names))).map(toEntry);
  }

  async mutate(actor: Actor, name: string, decide: Decide): Promise<MutationResult> {
    return this.db.transaction(async (db) => {
      const usage = await lockUser(db, actor.user);
      const row = await first<EntryRow>(db, statement('live', actor.user, name));
      const before = row && toEntry(row);
      const change = callDecide(() => decide(before, usage));
      return { before, after: await this.apply(db, actor, name, row, change) };
    });
  }

  async mutateAll(actor: Actor, decide: DecideAll): Promise<void> {
    await this.db.transaction(async (db) => {
      const usage = await lockUser(db, actor.user);
      const rows = (await db.query<EntryRow>(statement('allLive', actor.user))).rows;
      const byName = new Map(rows.map((row) => [row.name, row]));
      const changes = callDecide(() => decide(rows.map(toEntry), usage));
      for (const { name, change } of changes) await this.apply(db, actor, name, byName.get(name), change);
    });
  }

  async history(user: string, name: string): Promise<RevisionRecord[]> {
    return this.db.query<RevisionRecord>(statement('history', user, name));
  }

  async trash(user: string): Promise<TrashedEntry[]> {
    return (await this.db.query<TrashRow>(statement('trash', user))).map(toTrashedEntry);
  }

  async undrop(actor: Actor, name: string): Promise<UndropResult> {
    return this.db.transaction(async (db): Promise<UndropResult> => {
      await lockUser(db, actor.user);
      const row = await first<EntryRow>(db, statement('latestTrashed', actor.user, name));
      if (!row) return { status: 'missing' };
      if (await first(db, statement('live', actor.user, name))) return { status: 'taken' };
      const revision = row.revision + 1;
      await db.query(statement('undrop', actor.user, row.id, revision));
      await this.record(db, actor, row.id, revision, 'undrop', this.now(), row.description, row.body);
      await db.query(statement('addUsage', actor.user, row.size));
      return { status: 'restored', entry: { ...toEntry(row), revision } };
    });
  }

  /*
   * Purging deletes the rows (revisions go with them by ON DELETE CASCADE) and commits.
   * PostgreSQL's MVCC keeps the deleted row versions — bodies, descriptions, revisions —
   * as dead tuples in the table, TOAST and index pages until VACUUM (autovacuum, usually
   * within minutes) marks their space free; the bytes stay on disk until that space is
   * reused, or the table is rewritten by VACUUM FULL. The WAL, WAL archives, replicas
   * and backups keep their own copies for as long as those are retained.
   */
  async purge(user: string, name: string, options: { readonly includeLive: boolean }): Promise<number> {
    return this.db.transaction(async (db) => {
      await lockUser(db, user);
      const { rows } = await db.query<{ size: number; dropped_at: number | null }>(
        statement('purgeCopies', user, name, options.includeLive),
      );
      // A purged live entry no longer counts towards its user's total.
      const liveBytes = rows.reduce((sum, row) => sum + (row.dropped_at === null ? row.size : 0), 0);
      if (liveBytes > 0) await db.query(statement('addUsage', user, -liveBytes));
      return rows.length;
    });
  }

  /** Dropped entries count towards no usage, so no user lock is needed; see purge for what VACUUM keeps. */
  async purgeTrash(cutoff: number): Promise<number> {
    return this.db.transaction(async (db) => (await db.query(statement('purgeExpired', cutoff))).rowCount ?? 0);
  }

  async isEmpty(): Promise<boolean> {
    return isEmpty(this.db);
  }

  async dump(): Promise<StoreDump> {
    return dumpDatabase(this.db);
  }

  async load(dump: StoreDump, options: LoadOptions): Promise<void> {
    await loadDatabase(this.db, dump, options);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  /** Applies one decided change to the live row (if any) and returns the entry after it. */
  private async apply(
    db: Queryable,
    actor: Actor,
    name: string,
    row: EntryRow | undefined,
    change: Change,
  ): Promise<StoredEntry | undefined> {
    if (change.kind === 'none') return row && toEntry(row);
    const at = this.now();
    if (change.kind === 'drop') {
      if (!row) return undefined;
      const revision = row.revision + 1;
      await db.query(statement('drop', actor.user, row.id, at, actor.label, revision));
      await this.record(db, actor, row.id, revision, 'drop', at, row.description, row.body);
      await db.query(statement('addUsage', actor.user, -row.size));
      return undefined;
    }
    refuseNul(name, change.description, change.body);
    const size = utf8Bytes(change.body);
    const revision = (row?.revision ?? 0) + 1;
    const values = [change.description, change.body, size, at, revision];
    let id: number;
    if (row) {
      id = row.id;
      await db.query(statement('update', actor.user, id, ...values));
    } else {
      const inserted = await first<{ id: number }>(db, statement('insert', actor.user, name, ...values));
      id = inserted!.id;
    }
    await this.record(db, actor, id, revision, change.operation, at, change.description, change.body);
    await db.query(statement('addUsage', actor.user, size - (row?.size ?? 0)));
    return {
      name,
      description: change.description,
      body: change.body,
      size,
      created: row?.created ?? at,
      updated: at,
      revision,
    };
  }

  private async record(
    db: Queryable,
    actor: Actor,
    id: number,
    revision: number,
    operation: RevisionRecord['operation'],
    at: number,
    description: string,
    body: string,
  ): Promise<void> {
    await db.query(statement('addRevision', actor.user, id, revision, operation, actor.label, at, description, body));
    if (revision > this.historyLimit) {
      await db.query(statement('trimRevisions', actor.user, id, revision - this.historyLimit));
    }
  }
}

/** Takes the lock that serialises the user's writes (creating their row on first write) and reads their usage. */
async function lockUser(db: Queryable, user: string): Promise<Usage> {
  await db.query(statement('ensureUser', user));
  const row = await first<{ total_bytes: number }>(db, statement('lockUser', user));
  return { totalBytes: row?.total_bytes ?? 0 };
}

async function first<Row>(db: Queryable, query: Statement): Promise<Row | undefined> {
  return (await db.query<Row>(query)).rows[0];
}

/** PostgreSQL text cannot hold U+0000; refuse it with a message rather than a driver error. */
function refuseNul(name: string, description: string, body: string): void {
  if (!description.includes('\0') && !body.includes('\0')) return;
  throw new EngramError(
    'INVALID_ARGUMENT',
    `${name} cannot be saved: its text contains the NUL character (\\u0000), which this PostgreSQL store cannot hold. Remove it and call again.`,
  );
}
