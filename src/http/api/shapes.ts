/**
 * What the REST API shows of entries, revisions and the trash: the stored records with
 * times as ISO 8601 strings (as in the export format), so a browser or script reads them
 * without knowing Engram's internals.
 */

import { lineCount } from '../../memory/model/revision-diff.js';
import { utf8Bytes } from '../../memory/model/text.js';
import type { OverviewRow, RevisionRecord, StoredEntry } from '../../memory/port.js';
import type { TrashItem } from '../../memory/recovery.js';

const iso = (ms: number) => new Date(ms).toISOString();

export function entryJson(entry: StoredEntry) {
  return {
    name: entry.name,
    description: entry.description,
    size: entry.size,
    revision: entry.revision,
    created: iso(entry.created),
    updated: iso(entry.updated),
    body: entry.body,
  };
}

/** An index row with its last change: when, the revision, and who made it (the history's actor). */
export function overviewJson(row: OverviewRow) {
  return {
    name: row.name,
    size: row.size,
    description: row.description,
    updated: iso(row.updated),
    revision: row.revision,
    actor: row.actor,
  };
}

export function revisionJson(item: RevisionRecord) {
  return {
    revision: item.revision,
    operation: item.operation,
    actor: item.actor,
    at: iso(item.at),
    description: item.description,
    size: utf8Bytes(item.body),
    body: item.body,
  };
}

/** One side of a diff too different to show line by line: the revision, its size and line count, and its text. */
export function diffSideJson(item: RevisionRecord) {
  return {
    revision: item.revision,
    description: item.description,
    size: utf8Bytes(item.body),
    lines: lineCount(item.body),
    body: item.body,
  };
}

/** A trash row, without its body: the entry's history holds it. */
export function trashJson(item: TrashItem) {
  return {
    name: item.name,
    description: item.description,
    size: item.size,
    created: iso(item.created),
    updated: iso(item.updated),
    droppedAt: iso(item.droppedAt),
    droppedBy: item.droppedBy,
    purgeAt: iso(item.purgeAt),
  };
}
