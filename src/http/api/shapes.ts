/**
 * What the REST API shows (docs/api.md): the stored records with times as ISO 8601 strings
 * (as in the export format), so a browser or script reads them without knowing Engram's
 * internals; and the types of its answers. The web UI imports these types (web/src/lib/api/
 * types.ts) from here alone, so that its client and the server cannot disagree on a shape
 * and its imports do not follow the server's modules around.
 */

import type { SessionInfo } from '../../access/accounts/sessions.js';
import type { AppInfo } from '../../access/oauth/tokens.js';
import type { TokenInfo } from '../../access/tokens/access.js';
import type { ActivityItem, ActorCount } from '../../memory/activity.js';
import type { ChangeSummary } from '../../memory/model/revert-plan.js';
import { lineCount } from '../../memory/model/revision-diff.js';
import { utf8Bytes } from '../../memory/model/text.js';
import type { OverviewRow, RevisionRecord, StoredEntry } from '../../memory/port.js';
import type { TrashItem } from '../../memory/recovery.js';
import type { EntryPreview, RevertPreview, RevertResult } from '../../memory/revert.js';
import type { ProposalView } from '../../memory/review.js';
import type { SearchHit } from '../../memory/search.js';
import type { DuplicatePair, DuplicateSide, Duplicates, MergeResult } from '../../memory/tidy.js';
import type { BridgeKind } from '../../transfer/bridges/index.js';
import type { ImportedItem, ImportFromResult } from '../../transfer/bridges/run.js';
import type { ImportReport } from '../../transfer/transfer.js';

export type { ItemAction } from '../../transfer/bridges/run.js';
export type { BridgeKind, ImportReport };

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | undefined) => (ms === undefined ? null : iso(ms));

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

/**
 * An index row with its last change: when, the revision, and who made it (the history's
 * actor); and when a model last opened it (to the hour), null when not since the overview's `openedSince`.
 */
export function overviewRowJson(row: OverviewRow) {
  return {
    name: row.name,
    size: row.size,
    description: row.description,
    created: iso(row.created),
    updated: iso(row.updated),
    revision: row.revision,
    actor: row.actor,
    opened: isoOrNull(row.opened),
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
    /** Why the change was made (a revert's or a merge's note), or null. */
    note: item.note ?? null,
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

/** An activity item with its time as ISO 8601, as every time of the API. */
export function activityItemJson(item: ActivityItem) {
  return { ...item, at: iso(item.at) };
}

export function actorJson(actor: ActorCount) {
  return { ...actor, last: iso(actor.last) };
}

/** A search hit with its time as ISO 8601, as every time of the API. */
export function searchHitJson(hit: SearchHit) {
  return { ...hit, updated: iso(hit.updated) };
}

export function tokenJson(token: TokenInfo) {
  return {
    id: token.id,
    label: token.label,
    readOnly: token.readOnly,
    review: token.review,
    created: iso(token.created),
    lastUsed: isoOrNull(token.lastUsed),
  };
}

export function appJson(app: AppInfo) {
  return {
    id: app.id,
    name: app.name,
    clientId: app.clientId,
    scopes: app.scopes,
    review: app.review,
    created: iso(app.created),
    lastUsed: isoOrNull(app.lastUsed),
  };
}

/**
 * A change held for review, against the entry as it is now: what was asked and by whom,
 * when it expires, whether approving would apply it (and why not), the unified diff from
 * the entry now to what approving makes of it (a conflict's: to what the app asked for;
 * null when too different to show, with both texts beside it), and that text.
 */
export function proposalJson(view: ProposalView) {
  const { proposal, current } = view;
  return {
    id: proposal.id,
    name: proposal.name,
    operation: proposal.operation,
    actor: proposal.actor,
    at: iso(proposal.at),
    expires: iso(view.expires),
    asked: {
      description: proposal.description ?? null,
      new: proposal.new ?? null,
      old: proposal.old ?? null,
    },
    applies: view.applies,
    why: view.why ?? null,
    current: current ? { revision: current.revision, description: current.description, body: current.body } : null,
    after: view.after,
    diff: view.patch,
  };
}

/** A browser signed in with a password; `current` when it is the one asking. */
export function browserSessionJson(session: SessionInfo, current: string | undefined) {
  return {
    id: session.id,
    agent: session.agent,
    created: iso(session.created),
    expires: iso(session.expires),
    lastUsed: isoOrNull(session.lastUsed),
    current: session.id === current,
  };
}

function changeSummaryJson(change: ChangeSummary) {
  const { revision, operation, actor, at, description, size, note } = change;
  return { revision, operation, actor, at: iso(at), description, size, note: note ?? null };
}

function revertEntryJson(entry: EntryPreview) {
  return { ...entry, changes: entry.changes.map(changeSummaryJson), conflicts: entry.conflicts.map(changeSummaryJson) };
}

/** A revert's preview (GET /api/revert, GET /api/revert/{id}/undo): times as ISO 8601. */
export function revertPreviewJson(preview: RevertPreview) {
  return {
    actor: preview.actor ?? null,
    since: isoOrNull(preview.since),
    until: isoOrNull(preview.until),
    undoes: preview.undoes ?? null,
    entries: preview.entries.map(revertEntryJson),
    version: preview.version,
  };
}

export function revertResultJson(result: RevertResult) {
  return { ...result };
}

/** One entry of a possible duplicate pair: what the person needs to choose, and the revision a merge sends back. */
export interface DuplicateSideJson {
  name: string;
  description: string;
  size: number;
  revision: number;
  /** ISO 8601. */
  updated: string;
}

/** Two entries that may be one: why (the fields close enough), and how close each field is, 0 to 1 (two decimals). */
export interface DuplicatePairJson {
  a: DuplicateSideJson;
  b: DuplicateSideJson;
  score: number;
  reasons: ('name' | 'description' | 'body')[];
  similarity: { name: number; description: number; body: number };
}

/** `GET /api/duplicates`: the pairs, highest score first; the entries compared; whether more may be close. */
export interface DuplicatesJson {
  pairs: DuplicatePairJson[];
  examined: number;
  truncated: boolean;
}

/** `POST /api/merge`: the merge's id (undone with POST /api/revert/{id}/undo), its note, and the two entries. */
export interface MergeResultJson {
  id: string;
  note: string;
  into: string;
  dropped: string;
}

/** A similarity to two decimals, as the listing shows it. */
const twoDecimals = (value: number) => Math.round(value * 100) / 100;

function duplicateSideJson(side: DuplicateSide): DuplicateSideJson {
  const { name, description, size, revision, updated } = side;
  return { name, description, size, revision, updated: iso(updated) };
}

function duplicatePairJson(pair: DuplicatePair): DuplicatePairJson {
  const { name, description, body } = pair.similarity;
  return {
    a: duplicateSideJson(pair.a),
    b: duplicateSideJson(pair.b),
    score: twoDecimals(pair.score),
    reasons: [...pair.reasons],
    similarity: { name: twoDecimals(name), description: twoDecimals(description), body: twoDecimals(body) },
  };
}

export function duplicatesJson(found: Duplicates): DuplicatesJson {
  return { pairs: found.pairs.map(duplicatePairJson), examined: found.examined, truncated: found.truncated };
}

export function mergeResultJson(result: MergeResult): MergeResultJson {
  const { id, note, into, dropped } = result;
  return { id, note, into, dropped };
}

export type RevertPreviewJson = ReturnType<typeof revertPreviewJson>;
export type RevertEntryJson = ReturnType<typeof revertEntryJson>;
export type RevertChangeJson = ReturnType<typeof changeSummaryJson>;
export type RevertResultJson = ReturnType<typeof revertResultJson>;
export type EntryJson = ReturnType<typeof entryJson>;
export type OverviewRowJson = ReturnType<typeof overviewRowJson>;
export type RevisionJson = ReturnType<typeof revisionJson>;
export type DiffSideJson = ReturnType<typeof diffSideJson>;
export type TrashJson = ReturnType<typeof trashJson>;
export type ActivityItemJson = ReturnType<typeof activityItemJson>;
export type ActorJson = ReturnType<typeof actorJson>;
export type SearchHitJson = ReturnType<typeof searchHitJson>;
export type TokenJson = ReturnType<typeof tokenJson>;
export type AppJson = ReturnType<typeof appJson>;
export type ProposalJson = ReturnType<typeof proposalJson>;
export type BrowserSessionJson = ReturnType<typeof browserSessionJson>;

/** `GET /api/entries`: the index, what it takes of the caller's quota, and the limits an edit must keep. */
export interface OverviewJson {
  readonly entries: OverviewRowJson[];
  /**
   * Since when Engram records openings (its upgrade to them, or the memory's creation): an
   * entry whose `opened` is null was not opened by a model since then (nor, to the hour, after its creation).
   */
  readonly openedSince: string;
  readonly usage: { readonly bytes: number; readonly entries: number };
  readonly limits: {
    readonly entryCap: number;
    readonly userCap: number;
    readonly maxEntries: number;
    readonly descriptionCap: number;
    readonly groups: readonly string[];
  };
}

/** `GET /api/session` (and signing in or out): how the server authenticates, and who the page is. */
export interface SessionJson {
  readonly auth: 'none' | 'token' | 'oauth';
  /** Whether the server takes a user name and password (it has accounts). */
  readonly signIn: boolean;
  readonly user: string | null;
  readonly via: 'none' | 'session' | 'token' | null;
  /** The page can change nothing: a read-only token, or a review-mode one (whose changes wait for review). */
  readonly readOnly: boolean;
}

/** `GET …/diff`: the unified diff, or both revisions when they are too different to show line by line. */
export type DiffJson =
  | { readonly tooDifferent: false; readonly diff: string }
  | { readonly tooDifferent: true; readonly diff: null; readonly from: DiffSideJson; readonly to: DiffSideJson };

/** One item of another memory's source, what the import does with it, and how to act on that (`hint`). */
export type ImportedItemJson = ImportedItem & { readonly hint?: string };

/** `POST /api/import?from=KIND`: what became of each item of the source, and the import's report. */
export interface ImportFromJson {
  readonly kind: BridgeKind;
  readonly dryRun: boolean;
  readonly items: readonly ImportedItemJson[];
  /** Items left out past the first ones listed, counted by problem (absent when there are none). */
  readonly unlisted?: ImportFromResult['unlisted'];
  /** The sources over the entry cap: the import is refused unless they are split. */
  readonly tooLarge: readonly string[];
  readonly report: ImportReport;
}
