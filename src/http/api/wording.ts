/**
 * Refusals in the REST API's own words. Core words a refusal for the model, and the
 * recovery refusals in no door's words; a script or the web UI calling /api is told the
 * route to call, so every refusal that says how to call again is worded here, by route,
 * from its detail. The table has an entry for every code and reason (memory/model/door-wording.ts):
 * a new one does not build until it is worded here or core's message is kept on purpose.
 */

import { CORE_MESSAGE, type DoorWording, NEVER_HERE, wordedBy } from '../../memory/model/door-wording.js';
import type { EngramError, TextField } from '../../memory/model/errors.js';
import { didYouMean } from '../../memory/model/format.js';
import { formatCount } from '../../memory/model/text.js';
import { nothingDone, recoveredOverCapProblem } from '../../memory/recovery-caps.js';
import { listedSources } from '../../transfer/bridges/listed-sources.js';

/** The refusal of a change asked with a read-only token. */
export const READ_ONLY_TOKEN =
  'This token is read-only: it can GET from /api but not change memory. ' +
  'Ask the owner of this server for a read-write token (engram token create --user NAME).';

/** The refusal of a change asked with a review-mode token. */
export const REVIEW_TOKEN =
  "This token's changes need the user's review: it can GET from /api, and change memory only through the MCP " +
  'tools, whose changes wait for review. Approving or rejecting them is for the user (the web UI, or engram review).';

/** The API path of an entry, as its routes spell it. */
function entryPath(name: string): string {
  return `/api/entries/${name}`;
}

/**
 * The field of a person's save that holds each text of the edit core makes of it
 * (memory/editor.ts): the whole body sent is core's `new`, replacing `old`, the body as it was.
 */
const TEXT_FIELD: Readonly<Record<TextField, string>> = {
  description: 'description',
  new: 'body',
  old: 'body',
  body: 'body',
};

const API_WORDING: DoorWording = {
  byCode: {
    INVALID_ARGUMENT: CORE_MESSAGE,
    INVALID_NAME: CORE_MESSAGE,
    READ_ONLY_GROUP: CORE_MESSAGE,
    READ_ONLY_TOKEN: CORE_MESSAGE,
    NOT_FOUND: CORE_MESSAGE,
    NO_MATCH: CORE_MESSAGE,
    // A save's old text is the whole body as it was, which occurs in it once (memory/editor.ts).
    AMBIGUOUS: NEVER_HERE,
    TOO_LARGE: CORE_MESSAGE,
    NOTHING_TO_DO: CORE_MESSAGE,
    CONFLICT: CORE_MESSAGE,
    UNAUTHORIZED: CORE_MESSAGE,
    // Only the model calls tools by name (memory/tools/handler.ts).
    UNKNOWN_TOOL: NEVER_HERE,
    // The command line reads the configuration before the server starts.
    INVALID_CONFIG: NEVER_HERE,
    TOO_MANY_ENTRIES: CORE_MESSAGE,
    BUSY: CORE_MESSAGE,
    STORE_BUSY: CORE_MESSAGE,
    STORE_READ_ONLY: CORE_MESSAGE,
    STORE_FULL: CORE_MESSAGE,
    STORE_REPLACED: CORE_MESSAGE,
    STORE_UNAVAILABLE: CORE_MESSAGE,
    TOO_MANY_ATTEMPTS: CORE_MESSAGE,
    STALE_REVISION: CORE_MESSAGE,
    // Only the model's tools propose (a review-mode token's or app's memory_write and memory_drop); the router
    // refuses a review-mode token's changes through /api before any Memory call.
    TOO_MANY_PROPOSALS: NEVER_HERE,
    // Every conflict carries its detail (proposal-conflict below).
    PROPOSAL_CONFLICT: NEVER_HERE,
  },
  byReason: {
    'restore-in-trash': (detail) =>
      `${detail.name} is in the trash: undrop it first (POST /api/trash/${detail.name}/undrop), then restore.`,
    'recovered-over-cap': (detail) =>
      `${recoveredOverCapProblem(detail)}: GET ${entryPath(detail.name)}/history shows revision ${detail.revision}; ` +
      `copy what you need from it into an entry within the caps; ${nothingDone(detail)}.`,
    'undrop-taken': (detail) =>
      `${detail.name} cannot be undropped: a live entry has taken the name since. Drop the live one first ` +
      `(GET ${entryPath(detail.name)} shows it), then undrop again.`,
    'purge-live': (detail) =>
      `${detail.name} is a live entry, not in the trash: drop it first (DELETE ${entryPath(detail.name)}), then purge it.`,
    'undrop-missing': (detail) => `${detail.name} is not in the trash. GET /api/trash lists what is.`,
    'no-such-revision': (detail) => {
      const kept = `${detail.first}${detail.first === detail.last ? '' : ` to ${detail.last}`}`;
      return (
        `${detail.name} has no revision ${detail.revision}; the revisions kept are ${kept}. ` +
        `GET ${entryPath(detail.name)}/history lists them.`
      );
    },
    'user-cap': (detail) =>
      `${detail.name} would bring this memory to ${formatCount(detail.totalAfter)} bytes (names, descriptions and bodies); ` +
      `the cap is ${formatCount(detail.cap)}. Make room first: shorten or drop entries that are no longer needed ` +
      '(GET /api/entries shows their sizes), then try again.',
    'entry-cap': (detail) =>
      `${detail.name} would make ${formatCount(detail.entriesAfter)} entries in this memory; the cap is ` +
      `${formatCount(detail.cap)}. Make room first: drop entries that are no longer needed ` +
      '(GET /api/entries lists them), then try again.',
    'create-without-description': (detail) => `${detail.name} needs a description: one line on what it covers.`,
    'empty-description': (detail) =>
      `The description of ${detail.name} is empty once white space is folded: write one line on what it covers.`,
    'nul-character': (detail) =>
      `"${TEXT_FIELD[detail.field]}" contains a NUL character (\\u0000), which memory cannot hold: remove it and send it again.`,
    'description-over-cap': (detail) =>
      `The description of ${detail.name} is ${formatCount(detail.size)} characters; the cap is ` +
      `${formatCount(detail.cap)}: shorten it to one line on what it covers.`,
    'nothing-to-do': () => 'Nothing to save: send the description, the body, or both.',
    'drop-not-found': (detail) =>
      `${detail.name} not found, nothing was dropped.${didYouMean(detail.suggestions)} GET /api/entries lists every entry.`,
    'import-too-large': (detail) =>
      `${formatCount(detail.count)} item(s) are over the entry cap of ${formatCount(detail.cap)} bytes: ` +
      `${listedSources(detail)}. Send ?split=1 to split them into -2, -3 entries ` +
      '(with ?dryRun=1 to see how); nothing was imported.',
    'import-map-group': (detail) =>
      `options.map ${JSON.stringify({ [detail.type]: detail.group })}: "${detail.group}" is not a group of this memory ` +
      `(groups: ${detail.groups.join(', ')}); nothing was imported.`,
    'import-engram-export': (detail) =>
      `${detail.path} is an Engram export: send it to POST /api/import, without ?from=; nothing was imported.`,
    // The router refuses a read-only token before any Memory call, in these words; they stand should a route ever reach one.
    'read-only-caller': () => READ_ONLY_TOKEN,
    // This door's own GET /api/entries/{name} refuses so, in its words already.
    'open-in-trash': CORE_MESSAGE,
    // POST /api/session's sign-in: the seconds to wait, which Retry-After repeats.
    'sign-in-throttled': CORE_MESSAGE,
    // A person's create and save (memory/editor.ts) are worded for the web UI's reader already.
    'entry-exists': CORE_MESSAGE,
    'stale-revision': CORE_MESSAGE,
    'revert-unknown-actor': (detail) =>
      `No change by ${JSON.stringify(detail.actor)} is kept in this memory's history; nothing was reverted. ` +
      'GET /api/activity/actors lists the actors.',
    // Core's message says what the range held; it names no route.
    'revert-nothing': CORE_MESSAGE,
    'revert-stale': () =>
      'The memory changed since this preview: nothing was changed. Preview it again (GET /api/revert, or GET ' +
      '/api/revert/{id}/undo) and apply the new preview with its version.',
    // Core's message names the id (of a revert or a merge); no route helps find another.
    'revert-unknown': CORE_MESSAGE,
    // Core's message says which cap and by how much; it names no route.
    'revert-over-cap': CORE_MESSAGE,
    // PUT /api/entries/{name} saves a whole body and description, and refuses a missing entry itself
    // (memory/editor.ts): no old text to miss or leave empty, no tool write on a name that does not exist.
    'old-in-empty-body': NEVER_HERE,
    'old-not-found': NEVER_HERE,
    'empty-old': NEVER_HERE,
    'write-not-found': NEVER_HERE,
    // GET /api/entries/{name} opens one entry at a time.
    'too-many-names': NEVER_HERE,
    // Accounts are added and found by the command line (engram user), not through /api.
    'account-exists': NEVER_HERE,
    'user-not-found': NEVER_HERE,
    // The store is open before the server answers.
    'no-such-folder': NEVER_HERE,
    'duplicates-limit': (detail) =>
      `"limit" is the number of pairs to list, a whole number from 1 to ${detail.max}: GET /api/duplicates?limit=50.`,
    // Core's message names the entry; no route helps.
    'merge-same': CORE_MESSAGE,
    // Core's message says why and what to do instead (edit the entry by hand).
    'merge-purged': CORE_MESSAGE,
    'merge-missing': (detail) =>
      `${detail.name} is not in this memory (dropped or renamed meanwhile): nothing was merged. ` +
      'GET /api/duplicates lists the pairs as they are now.',
    'merge-stale': (detail) =>
      `${detail.name} has changed since it was listed (revision ${detail.expected}, now ${detail.current}): nothing ` +
      `was merged. Look at it again (GET ${entryPath(detail.name)}), then send the revisions you merge.`,
    // Core's message says which cap, by how much, and what to shorten; it names no route.
    'merge-over-cap': CORE_MESSAGE,
    'proposal-not-found': (detail) =>
      `No proposal ${detail.id} is waiting for review: it was approved, rejected or expired. GET /api/review lists those waiting.`,
    'proposal-conflict': (detail) =>
      `Proposal ${detail.id} (${detail.name}) no longer applies: ${detail.why}. Nothing was changed. ` +
      `GET /api/review/${detail.id} shows it against the entry as it is now; make the change by hand ` +
      `(PUT ${entryPath(detail.name)}) if you still want it, then POST /api/review/${detail.id}/reject.`,
    // The router refuses a review-mode token's changes before any Memory call, in these words.
    'review-caller': () => REVIEW_TOKEN,
  },
};

export function apiMessage(error: EngramError): string {
  return wordedBy(API_WORDING, error);
}
