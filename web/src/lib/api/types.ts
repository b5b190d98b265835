/**
 * The REST API's shapes, as the server declares them (src/http/api/shapes.ts), under the
 * names the web UI uses: imported as types only, so nothing of the server is bundled, and
 * a change to an answer's shape fails the web UI's typecheck instead of drifting from it.
 */

import type { OverviewJson, SearchHitJson } from '../../../../src/http/api/shapes';

export type {
  ActivityItemJson as ActivityItem,
  ActorJson as ActorCount,
  AppJson as AppInfo,
  BridgeKind as SourceKind,
  BrowserSessionJson as BrowserSession,
  DiffJson as DiffAnswer,
  DiffSideJson as DiffSide,
  DuplicatePairJson as DuplicatePair,
  DuplicateSideJson as DuplicateSide,
  DuplicatesJson as Duplicates,
  EntryJson as Entry,
  ImportedItemJson as ImportedItem,
  ImportFromJson as ImportFromReport,
  ImportReport,
  ItemAction,
  MergeResultJson as MergeResult,
  OverviewJson as Overview,
  OverviewRowJson as IndexRow,
  ProposalJson as Proposal,
  RevertChangeJson as RevertChange,
  RevertEntryJson as RevertEntry,
  RevertPreviewJson as RevertPreview,
  RevertResultJson as RevertResult,
  RevisionJson as Revision,
  SessionJson as Session,
  TokenJson as TokenInfo,
  TrashJson as TrashItem,
} from '../../../../src/http/api/shapes';

export type Limits = OverviewJson['limits'];
export type SearchHit = SearchHitJson;
/** A part of a hit: plain text, and where the words searched for are in it ([start, end) in UTF-16 units). */
export type SearchSnippet = SearchHitJson['snippets'][number];
