/**
 * The row shapes of the schema both SQL backends (SQLite and PostgreSQL) share, and how a
 * row becomes a core record. The two schemas are the same table for table and column for
 * column, with one data model: each body is kept once, in the entry's latest revision, so
 * entries.body is NULL but where no revision holds the text (bodyOf reads it from either).
 * The one difference in what a row holds is tokens.read_only, a boolean in PostgreSQL and
 * an integer 0 or 1 in SQLite, which the SQLite backend converts itself.
 * Everything else of a backend (its SQL, transactions, quirks) stays in its own folder.
 */

import type { TokenRecord } from '../access/tokens/port.js';
import type { DumpedEntry, OverviewRow, RevisionRecord, StoredEntry, TrashedEntry } from '../memory/port.js';

/**
 * An entry's body (SQLite schema 11, PostgreSQL schema 8), in SQL of both dialects: its
 * latest revision's, which holds it, unless the entry row holds one of its own (an entry
 * no revision of which has its text: written by hand or by an older Engram, or past a
 * history limit of 0). `entry` is the entries table's name or alias.
 */
export function bodyOf(entry: string): string {
  return `coalesce(${entry}.body, (SELECT head.body FROM revisions head
       WHERE head.user_id = ${entry}.user_id AND head.entry_id = ${entry}.id AND head.revision = ${entry}.revision))`;
}

/**
 * What a revision takes against the history cap, as usage.ts's revisionBytes, in SQL of
 * both dialects: the UTF-8 bytes of its description and body. `revision` is the revisions
 * table's alias, if the statement gives it one.
 */
export function revisionBytes(revision?: string): string {
  const column = (name: string) => (revision ? `${revision}.${name}` : name);
  return `octet_length(${column('description')}) + octet_length(${column('body')})`;
}

/** The columns an entry is read by, in the order of EntryRow, of the entries table or alias `entry`. */
export function entryColumns(entry: string): string {
  const [id, name, description, size, created, updated, revision] = [
    'id',
    'name',
    'description',
    'size',
    'created',
    'updated',
    'revision',
  ].map((column) => `${entry}.${column}`);
  return `${id}, ${name}, ${description}, ${bodyOf(entry)} AS body, ${size}, ${created}, ${updated}, ${revision}`;
}

/** The columns a token is read and written by, in the order of TokenRow. */
export const TOKEN_COLUMNS = 'id, user_id, label, read_only, hash, created, last_used, review';

/** An entry as read by entryColumns. */
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

/** An entry in the trash: entryColumns with who dropped it and when. */
export interface TrashRow extends EntryRow {
  dropped_at: number;
  dropped_by: string;
}

/** Every column of an entry, live (dropped_at null) or dropped, as a dump reads it. */
export interface DumpedEntryRow extends EntryRow {
  user_id: string;
  dropped_at: number | null;
  dropped_by: string | null;
  opened: number | null;
}

/** An overview row as SQL reads it: `opened` NULL where the entry was not opened since openings are recorded. */
export type OverviewColumns = Omit<OverviewRow, 'opened'> & { opened: number | null };

export function toOverviewRow(row: OverviewColumns): OverviewRow {
  return { ...row, opened: row.opened ?? undefined };
}

/** A revision with the id of its entry, as a dump reads it. */
export interface RevisionRow extends RevisionColumns {
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
  review: ReadOnly;
}

/** A revision as SQL reads it: its note NULL where none was given. */
export type RevisionColumns<Record extends RevisionRecord = RevisionRecord> = Omit<Record, 'note'> & {
  note?: string | null;
};

/** A revision read from SQL, its note left out where it has none (as the in-process store keeps it). */
export function toRevision<Record extends RevisionRecord>(row: RevisionColumns<Record>): Record {
  const { note, ...rest } = row;
  return (note == null ? rest : { ...rest, note }) as Record;
}

export function toEntry(row: EntryRow): StoredEntry {
  const { name, description, body, size, created, updated, revision } = row;
  return { name, description, body, size, created, updated, revision };
}

/** An entry from its row read as an array of entryColumns, in their order (id, which it leaves out, first). */
export function toEntryFromColumns(columns: readonly unknown[]): StoredEntry {
  return {
    name: columns[1] as string,
    description: columns[2] as string,
    body: columns[3] as string,
    size: columns[4] as number,
    created: columns[5] as number,
    updated: columns[6] as number,
    revision: columns[7] as number,
  };
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
    list.push(toRevision(record));
    revisions.set(entry_id, list);
  }
  return entryRows.map((row) => ({
    ...toEntry(row),
    id: row.id,
    user: row.user_id,
    droppedAt: row.dropped_at,
    droppedBy: row.dropped_by,
    revisions: revisions.get(row.id) ?? [],
    opened: row.opened,
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
    review: row.review === true || row.review === 1,
  };
}
