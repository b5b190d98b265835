/**
 * The row shapes of the schema both SQL backends (SQLite and PostgreSQL) share, and how a
 * row becomes a core record. The two schemas are the same table for table and column for
 * column; the differences in what a row holds are tokens.read_only, a boolean in
 * PostgreSQL and an integer 0 or 1 in SQLite, which the SQLite backend converts itself,
 * and entries.body, which SQLite leaves NULL where the entry's latest revision holds the
 * text (its statements read it from there, so EntryRow is the same).
 * Everything else of a backend (its SQL, transactions, quirks) stays in its own folder.
 */

import type { TokenRecord } from '../access/tokens/port.js';
import type { DumpedEntry, RevisionRecord, StoredEntry, TrashedEntry } from '../memory/port.js';

/** The columns an entry is read by, in the order of EntryRow. */
export const ENTRY_COLUMNS = 'id, name, description, body, size, created, updated, revision';

/** The columns a token is read and written by, in the order of TokenRow. */
export const TOKEN_COLUMNS = 'id, user_id, label, read_only, hash, created, last_used';

/** An entry as read by ENTRY_COLUMNS. */
export interface EntryRow {
  id: number;
  name: string;
  description: string;
  body: string;
  size: number;
  created: number;
  updated: number;
  revision: number;
}

/** An entry in the trash: ENTRY_COLUMNS with who dropped it and when. */
export interface TrashRow extends EntryRow {
  dropped_at: number;
  dropped_by: string;
}

/** Every column of an entry, live (dropped_at null) or dropped, as a dump reads it. */
export interface DumpedEntryRow extends EntryRow {
  user_id: string;
  dropped_at: number | null;
  dropped_by: string | null;
}

/** A revision with the id of its entry, as a dump reads it. */
export interface RevisionRow extends RevisionRecord {
  entry_id: number;
}

/** A token as read by TOKEN_COLUMNS; read_only is a boolean here, 0 or 1 (`TokenRow<number>`) in SQLite. */
export interface TokenRow<ReadOnly = boolean> {
  id: string;
  user_id: string;
  label: string;
  read_only: ReadOnly;
  hash: string;
  created: number;
  last_used: number | null;
}

export function toEntry(row: EntryRow): StoredEntry {
  const { name, description, body, size, created, updated, revision } = row;
  return { name, description, body, size, created, updated, revision };
}

export function toTrashedEntry(row: TrashRow): TrashedEntry {
  return { ...toEntry(row), droppedAt: row.dropped_at, droppedBy: row.dropped_by };
}

/** The dump's entries, each with its revisions (read ordered by entry, then revision). */
export function toDumpedEntries(
  entryRows: readonly DumpedEntryRow[],
  revisionRows: readonly RevisionRow[],
): DumpedEntry[] {
  const revisions = new Map<number, RevisionRecord[]>();
  for (const { entry_id, ...record } of revisionRows) {
    const list = revisions.get(entry_id) ?? [];
    list.push(record);
    revisions.set(entry_id, list);
  }
  return entryRows.map((row) => ({
    ...toEntry(row),
    id: row.id,
    user: row.user_id,
    droppedAt: row.dropped_at,
    droppedBy: row.dropped_by,
    revisions: revisions.get(row.id) ?? [],
  }));
}

/** The token a row holds, read_only a boolean (PostgreSQL) or 0 or 1 (SQLite). */
export function toTokenRecord(row: TokenRow<boolean | number>): TokenRecord {
  return {
    id: row.id,
    user: row.user_id,
    label: row.label,
    readOnly: row.read_only === true || row.read_only === 1,
    hash: row.hash,
    created: row.created,
    lastUsed: row.last_used ?? undefined,
  };
}
