/**
 * The storage engine's primitives (engine/primitives.ts) on one PostgreSQL transaction's
 * connection, each one statement, awaited by runAsync. A write of an entry is saved whole
 * by one statement (saveWrite, the hot-path override: statements.ts, saveParts) rather
 * than by four; drops, undrops, the history cap and purges go primitive by primitive.
 * Writes of a user run under their lock (lockUser, taken by the store before the engine
 * runs); the usage it read is what a decision sees.
 */

import type { AppliedChange, UsageDelta } from '../../memory/model/apply.js';
import { EngramError } from '../../memory/model/errors.js';
import { distinctSearchText } from '../../memory/model/search-words.js';
import type { RevisionRecord, StoredEntry, Usage } from '../../memory/port.js';
import type {
  CommonPrimitives,
  Copy,
  Counters,
  OlderRevision,
  TrashedCopy,
  WholeWrites,
} from '../engine/primitives.js';
import type { EntryRow } from '../sql-rows.js';
import type { Queryable, Statement } from './driver.js';
import { statement } from './statements.js';
import { callDecide } from './transaction.js';

/** What a save returns when it wrote: the entry's id and the user's counters after it. */
export interface SavedRow {
  id: number;
  total_bytes: number;
  history_bytes: number;
  entries: number;
  /** The id of the transaction that saved it (txid_current): a shared one's, to ask about after a lost COMMIT. */
  xid: string;
}

export class PostgresPrimitives implements CommonPrimitives, WholeWrites {
  constructor(
    private readonly db: Queryable,
    /** The user whose lock this transaction holds, with the usage read as it was taken. */
    private locked?: { readonly user: string; readonly usage: Usage },
  ) {}

  liveEntry(user: string, name: string): Promise<EntryRow | undefined> {
    return first<EntryRow>(this.db, statement('live', user, name));
  }

  async liveEntries(user: string): Promise<EntryRow[]> {
    return (await this.db.query<EntryRow>(statement('allLive', user))).rows;
  }

  latestTrashed(user: string, name: string): Promise<EntryRow | undefined> {
    return first<EntryRow>(this.db, statement('latestTrashed', user, name));
  }

  async usage(user: string): Promise<Usage> {
    if (this.locked?.user === user) return this.locked.usage;
    return (await first<Usage>(this.db, statement('usage', user))) ?? { totalBytes: 0, entries: 0 };
  }

  async saveWrite(user: string, id: number | undefined, applied: AppliedChange): Promise<Counters> {
    const { entry } = applied;
    callDecide(() => refuseNul(entry.name, entry.description, entry.body));
    this.locked = undefined;
    const saved = await first<SavedRow>(this.db, save(user, null, id, applied));
    if (!saved) throw new Error(`the save of ${entry.name} under the user's lock wrote nothing`);
    return { historyBytes: saved.history_bytes, entries: saved.entries };
  }

  async dropEntry(
    user: string,
    id: number,
    entry: StoredEntry,
    record: RevisionRecord,
    rowBody: string | null,
  ): Promise<void> {
    await this.db.query(statement('drop', user, id, record.at, record.actor, entry.revision, rowBody));
  }

  async undropEntry(user: string, id: number, entry: StoredEntry, rowBody: string | null): Promise<void> {
    await this.db.query(statement('undrop', user, id, entry.revision, rowBody));
    await this.db.query(statement('leaveTrash', user, id, entry.revision - 1));
  }

  async addRevision(user: string, id: number, record: RevisionRecord): Promise<void> {
    const { revision, operation, actor, at, description, body } = record;
    const note = record.note ?? null;
    await this.db.query(statement('addRevision', user, id, revision, operation, actor, at, description, body, note));
  }

  async trimRevisions(user: string, id: number, through: number): Promise<number> {
    const { rows } = await this.db.query<{ bytes: number }>(statement('trimRevisions', user, id, through));
    return rows.reduce((sum, row) => sum + row.bytes, 0);
  }

  async addUsage(user: string, delta: UsageDelta): Promise<Counters> {
    this.locked = undefined;
    const { totalBytes, entries, historyBytes } = delta;
    const after = await first<{ history_bytes: number; entries: number }>(
      this.db,
      statement('addUsage', user, totalBytes, entries, historyBytes),
    );
    if (!after) throw new Error(`no usage row for ${user}: their writes run under their lock, which creates it`);
    return { historyBytes: after.history_bytes, entries: after.entries };
  }

  async olderRevisions(user: string, limit: number, liveEntries: number): Promise<OlderRevision[]> {
    return (await this.db.query<OlderRevision>(statement('olderRevisions', user, limit, liveEntries + limit))).rows;
  }

  async deleteRevisions(user: string, revisions: readonly OlderRevision[]): Promise<void> {
    const [entries, numbers] = [revisions.map((row) => row.entry), revisions.map((row) => row.revision)];
    await this.db.query(statement('deleteRevisionsAmong', user, entries, numbers));
  }

  async oldestTrash(user: string, limit: number): Promise<TrashedCopy[]> {
    return (await this.db.query<TrashedCopy>(statement('oldestTrash', user, limit))).rows;
  }

  async deleteCopies(user: string, ids: readonly number[]): Promise<number> {
    return (await first<{ bytes: number }>(this.db, statement('deleteCopies', user, ids)))?.bytes ?? 0;
  }

  async copies(user: string, name: string, includeLive: boolean): Promise<Copy[]> {
    return (await this.db.query<Copy>(statement('copies', user, name, includeLive))).rows;
  }

  /** Their users are locked first, in one order, as writers lock them. */
  async expiredTrash(cutoff: number): Promise<Copy[]> {
    await this.db.query(statement('lockExpiredUsers', cutoff));
    return (await this.db.query<Copy>(statement('expiredTrash', cutoff))).rows;
  }
}

async function first<Row>(db: Queryable, query: Statement): Promise<Row | undefined> {
  return (await db.query<Row>(query)).rows[0];
}

/**
 * The statement that saves a write (statements.ts, saveParts): over the live row `id`, or
 * as a new row; only while the user's change counter is `changes` (null: under the lock).
 */
export function save(user: string, changes: number | null, id: number | undefined, applied: AppliedChange): Statement {
  const { entry, record, usage } = applied;
  if (
    record.revision !== entry.revision ||
    record.at !== entry.updated ||
    record.description !== entry.description ||
    record.body !== entry.body
  ) {
    throw new Error(`the revision of a write of ${entry.name} does not record the entry as written`);
  }
  const values = [
    user,
    changes,
    usage.totalBytes,
    usage.entries,
    usage.historyBytes,
    entry.description,
    entry.body,
    entry.size,
    entry.updated,
    entry.revision,
    ...searchWords(id, applied),
    record.operation,
    record.actor,
  ];
  return id === undefined
    ? statement('saveNew', ...values, entry.name, applied.trimThrough, record.note ?? null)
    : statement('saveOver', ...values, id, applied.trimThrough, record.note ?? null);
}

/**
 * The words a save sends for the entry's search vector ($11 to $13): of its name,
 * description and body; over a live row after an append, none for the name and
 * description and those of the appended text alone (statements.ts, saveOver).
 */
function searchWords(id: number | undefined, applied: AppliedChange): [string | null, string | null, string] {
  const { entry, appended } = applied;
  if (id !== undefined && appended !== undefined) return [null, null, distinctSearchText(appended)];
  return [distinctSearchText(entry.name), distinctSearchText(entry.description), distinctSearchText(entry.body)];
}

/** PostgreSQL text cannot hold U+0000; refuse it with a message rather than a driver error. */
export function refuseNul(name: string, description: string, body: string): void {
  if (!description.includes('\0') && !body.includes('\0')) return;
  throw new EngramError(
    'INVALID_ARGUMENT',
    `${name} cannot be saved: its text contains the NUL character (\\u0000), which this PostgreSQL store cannot hold. Remove it and call again.`,
  );
}
