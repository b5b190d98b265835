/**
 * Refusals in the command line's own words. Core words a refusal for the model ("call
 * memory_write with name, description and new"), and its recovery refusals in no door's
 * words; a person at the terminal calls with flags and commands instead, so every
 * refusal that says how to call again is worded here from its detail. The table has an
 * entry for every code and reason (memory/model/door-wording.ts): a new one does not build until
 * it is worded here or core's message is kept on purpose. A command line in a refusal is
 * one to paste: a path or user name in it is a shell word (shellWord), which no shell expands.
 */

import { CORE_MESSAGE, type DoorWording, NEVER_HERE, wordedBy } from '../memory/model/door-wording.js';
import type { EngramError, TextField } from '../memory/model/errors.js';
import { didYouMean } from '../memory/model/format.js';
import { shellWord } from '../memory/model/shell-word.js';
import { formatCount } from '../memory/model/text.js';
import { nothingDone, recoveredOverCapProblem } from '../memory/recovery-caps.js';
import { listedSources } from '../transfer/bridges/listed-sources.js';

/** Where each text of a write comes from on the command line. */
const TEXT_FLAG: Readonly<Record<TextField, string>> = {
  description: '-d',
  new: 'The new text (--new, --new-file or - for stdin)',
  old: '--old',
  // Only an imported entry has one, and the import words its refusal with the entry's place in the file.
  body: 'The body',
};

const CLI_WORDING: DoorWording = {
  byCode: {
    INVALID_ARGUMENT: CORE_MESSAGE,
    INVALID_NAME: CORE_MESSAGE,
    READ_ONLY_GROUP: CORE_MESSAGE,
    // The command line's caller is the local user, who may always write.
    READ_ONLY_TOKEN: NEVER_HERE,
    NOT_FOUND: CORE_MESSAGE,
    NO_MATCH: CORE_MESSAGE,
    // "old text occurs 2 times in …": --old's text, as a person at the terminal reads it too.
    AMBIGUOUS: CORE_MESSAGE,
    TOO_LARGE: CORE_MESSAGE,
    NOTHING_TO_DO: CORE_MESSAGE,
    CONFLICT: CORE_MESSAGE,
    UNAUTHORIZED: CORE_MESSAGE,
    // Only the model calls tools by name (memory/tools/handler.ts).
    UNKNOWN_TOOL: NEVER_HERE,
    INVALID_CONFIG: CORE_MESSAGE,
    TOO_MANY_ENTRIES: CORE_MESSAGE,
    // The server's import gate and event streams refuse so.
    BUSY: NEVER_HERE,
    STORE_BUSY: CORE_MESSAGE,
    STORE_READ_ONLY: CORE_MESSAGE,
    STORE_FULL: CORE_MESSAGE,
    STORE_REPLACED: CORE_MESSAGE,
    STORE_UNAVAILABLE: CORE_MESSAGE,
    // Only the web's pages sign in with a password, and save a person's edit of an entry.
    TOO_MANY_ATTEMPTS: NEVER_HERE,
    STALE_REVISION: NEVER_HERE,
    // Only a review-mode token's or app's change is held, and the command line's caller is the local user.
    TOO_MANY_PROPOSALS: NEVER_HERE,
    // Every conflict carries its detail (proposal-conflict below).
    PROPOSAL_CONFLICT: NEVER_HERE,
  },
  byReason: {
    'old-in-empty-body': (detail) =>
      `--old text not found in ${detail.name}: its body is empty. To add text: engram write ${detail.name} --new TEXT`,
    'old-not-found': (detail) =>
      `--old text not found in ${detail.name}. Closest line: ${JSON.stringify(detail.closestLine)} ` +
      `Copy the exact text from engram open ${detail.name} and run again.`,
    'write-not-found': (detail) =>
      `${detail.name} not found.${didYouMean(detail.suggestions)} ` +
      `To create it: engram write ${detail.name} -d "what it covers" --new TEXT (without --old).`,
    'create-without-description': (detail) =>
      `${detail.name} does not exist yet: to create it, pass -d "one line on what it covers" together with its ` +
      'text (--new TEXT, or - to read it from stdin).',
    'empty-description': (detail) =>
      `-d is empty once white space is folded: give one line on what ${detail.name} covers, ` +
      'or leave -d out to keep the current description.',
    'empty-old': () =>
      '--old must not be empty: give the exact text to replace or remove, or leave --old out to append --new.',
    'nul-character': (detail) =>
      `${TEXT_FLAG[detail.field]} contains a NUL character (\\u0000), which memory cannot hold. Remove it and run again.`,
    'description-over-cap': (detail) =>
      `-d is ${formatCount(detail.size)} characters; the cap is ${formatCount(detail.cap)}. ` +
      `Shorten it to one line on what ${detail.name} covers and run again.`,
    'nothing-to-do': () =>
      'Nothing to do: pass --new to append, --old and --new to replace, --old alone to remove, or -d to change the description.',
    'user-cap': (detail) =>
      `${detail.name} would bring this memory to ${formatCount(detail.totalAfter)} bytes (names, descriptions and bodies); ` +
      `the cap is ${formatCount(detail.cap)}. Make room first: shorten or drop entries that are no longer needed ` +
      '(engram index shows their sizes), then run again.',
    'entry-cap': (detail) =>
      `${detail.name} would make ${formatCount(detail.entriesAfter)} entries in this memory; the cap is ` +
      `${formatCount(detail.cap)}. Make room first: merge related entries into one, or drop entries that are no ` +
      'longer needed (engram index lists them), then run again.',
    'account-exists': (detail) =>
      `user ${detail.user} already exists; change the password with engram user set-password ${shellWord(detail.user)}`,
    'user-not-found': (detail) =>
      `there is no user ${detail.user}: engram user list shows every user; engram user add ${shellWord(detail.user)} adds one.`,
    'drop-not-found': (detail) =>
      `${detail.name} not found, nothing was dropped.${didYouMean(detail.suggestions)} engram index lists every entry.`,
    'restore-in-trash': (detail) =>
      `${detail.name} is in the trash: run engram undrop ${detail.name} first, then restore.`,
    'recovered-over-cap': (detail) =>
      `${recoveredOverCapProblem(detail)}: engram show ${detail.name} --rev ${detail.revision} prints that revision; ` +
      `copy what you need from it into an entry within the caps (engram write); ${nothingDone(detail)}.`,
    'undrop-taken': (detail) =>
      `${detail.name} cannot be undropped: a live entry has taken the name since. Rename or drop the live one first ` +
      `(engram open ${detail.name} shows it), then undrop again.`,
    'undrop-missing': (detail) => `${detail.name} is not in the trash. engram trash lists what is.`,
    'purge-live': (detail) =>
      `${detail.name} is a live entry: drop it first, or pass --force to purge it and all its history now.`,
    'no-such-revision': (detail) =>
      `${detail.name} has no revision ${detail.revision}; the revisions kept are ${keptRange(detail.first, detail.last)}. ` +
      `engram history ${detail.name} lists them.`,
    'import-too-large': (detail) =>
      `${formatCount(detail.count)} item(s) are over the entry cap of ${formatCount(detail.cap)} bytes: ` +
      `${listedSources(detail)}. Pass --split to split them into -2, -3 entries ` +
      '(--dry-run shows how); nothing was imported.',
    'too-many-names': (detail) =>
      `engram open takes at most ${detail.max} names at once; ${detail.given} were given. ` +
      'Open the entries you need most first, then the rest with another engram open.',
    'no-such-folder': (detail) =>
      `There is no memory at ${detail.path}: the folder ${detail.folder} does not exist, so nothing was created ` +
      '(a mistyped path must not start a new, empty memory). Check the path: --db, ENGRAM_DB, "db" in the config ' +
      "file, migrate's --to, or the arguments in your MCP client's config (Claude Desktop's claude_desktop_config.json, say). " +
      `To start a memory there, create the folder first (mkdir -p ${shellWord(detail.folder)}), then run again; ` +
      'or leave --db out to use the default path, whose folders Engram creates.',
    'import-engram-export': (detail) =>
      `${detail.path} is an Engram export: import it with engram import FILE, without --from; nothing was imported.`,
    // Core words it with the command line's own flag (--map TYPE=GROUP).
    'import-map-group': CORE_MESSAGE,
    // The command line's caller is the local user (see READ_ONLY_TOKEN).
    'read-only-caller': NEVER_HERE,
    // Only REST's GET /api/entries/{name} looks in the trash for an entry it cannot open.
    'open-in-trash': NEVER_HERE,
    // Only the web's pages sign in with a password.
    'sign-in-throttled': NEVER_HERE,
    // A person's create and save (memory/editor.ts) are the web's; engram write makes the tool's edit.
    'entry-exists': NEVER_HERE,
    'stale-revision': NEVER_HERE,
    'revert-unknown-actor': (detail) =>
      `No change by ${JSON.stringify(detail.actor)} is kept in this memory's history; nothing was reverted. ` +
      `${detail.actors.length > 0 ? `The actors are: ${detail.actors.join(', ')}. ` : ''}` +
      'engram activity shows who changed what (the actor is the fourth column).',
    // Core's message says what the range held; it names no flag.
    'revert-nothing': CORE_MESSAGE,
    'revert-stale': () =>
      'The memory changed while the revert was being applied: nothing was changed. Run engram revert again ' +
      '(with --dry-run first to see the new preview).',
    'revert-unknown': (detail) =>
      `No revert or merge ${detail.id} is kept in this memory's history: check the id engram revert or engram merge ` +
      'printed; nothing was changed.',
    // Core's message says which cap and by how much; it names no command.
    'revert-over-cap': CORE_MESSAGE,
    'duplicates-limit': (detail) =>
      `--limit takes the number of pairs to list: a whole number from 1 to ${detail.max}.`,
    // Core's message names the entry.
    'merge-same': CORE_MESSAGE,
    // Core's message says why and what to do instead (edit the entry by hand).
    'merge-purged': CORE_MESSAGE,
    'merge-missing': (detail) =>
      `${detail.name} is not in this memory: nothing was merged. engram duplicates lists the pairs as they are now.`,
    // engram merge reads both revisions itself: only a change between its reading and its writing meets this.
    'merge-stale': (detail) =>
      `${detail.name} changed while it was being merged (revision ${detail.expected}, now ${detail.current}): ` +
      'nothing was merged. Look at it again (engram open), then run engram merge again.',
    // Core's message says which cap, by how much, and what to shorten.
    'merge-over-cap': CORE_MESSAGE,
    'proposal-not-found': (detail) =>
      `No proposal ${detail.id} is waiting for review: it was approved, rejected or expired. engram review list shows those waiting.`,
    'proposal-conflict': (detail) =>
      `Proposal ${detail.id} (${detail.name}) no longer applies: ${detail.why}. Nothing was changed. ` +
      `engram review show ${detail.id} shows it against the entry as it is now; make the change by hand ` +
      `(engram write) if you still want it, then engram review reject ${detail.id}.`,
    // The command line's caller is the local user, never in review mode.
    'review-caller': NEVER_HERE,
  },
};

export function cliMessage(error: EngramError): string {
  return wordedBy(CLI_WORDING, error);
}

/** The revisions kept, as "3" or "1 to 3". */
function keptRange(first: number, last: number): string {
  return `${first}${first === last ? '' : ` to ${last}`}`;
}
