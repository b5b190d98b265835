/**
 * Refusals in the command line's own words. Core words a refusal for the model ("call
 * memory_write with name, description and new"), and its recovery refusals in no door's
 * words; a person at the terminal calls with flags and commands instead, so every
 * refusal that says how to call again is worded here from its detail. The others keep
 * core's message. A command line in a refusal is one to paste: a path or user name in it
 * is a shell word (shellWord), which no shell expands.
 */

import type { EngramError } from '../memory/model/errors.js';
import { didYouMean } from '../memory/model/format.js';
import { shellWord } from '../memory/model/shell-word.js';
import { formatCount } from '../memory/model/text.js';
import { nothingDone, recoveredOverCapProblem } from '../memory/recovery-caps.js';
import { listedSources } from '../transfer/bridges/run.js';

export function cliMessage(error: EngramError): string {
  const detail = error.detail;
  switch (detail?.reason) {
    case 'old-in-empty-body':
      return `--old text not found in ${detail.name}: its body is empty. To add text: engram write ${detail.name} --new TEXT`;
    case 'old-not-found':
      return (
        `--old text not found in ${detail.name}. Closest line: ${JSON.stringify(detail.closestLine)} ` +
        `Copy the exact text from engram open ${detail.name} and run again.`
      );
    case 'write-not-found':
      return (
        `${detail.name} not found.${didYouMean(detail.suggestions)} ` +
        `To create it: engram write ${detail.name} -d "what it covers" --new TEXT (without --old).`
      );
    case 'create-without-description':
      return (
        `${detail.name} does not exist yet: to create it, pass -d "one line on what it covers" together with its ` +
        'text (--new TEXT, or - to read it from stdin).'
      );
    case 'empty-description':
      return (
        `-d is empty once white space is folded: give one line on what ${detail.name} covers, ` +
        'or leave -d out to keep the current description.'
      );
    case 'empty-old':
      return '--old must not be empty: give the exact text to replace or remove, or leave --old out to append --new.';
    case 'nothing-to-do':
      return 'Nothing to do: pass --new to append, --old and --new to replace, --old alone to remove, or -d to change the description.';
    case 'user-cap':
      return (
        `${detail.name} would bring this memory to ${formatCount(detail.totalAfter)} bytes (names, descriptions and bodies); ` +
        `the cap is ${formatCount(detail.cap)}. Make room first: shorten or drop entries that are no longer needed ` +
        '(engram index shows their sizes), then run again.'
      );
    case 'entry-cap':
      return (
        `${detail.name} would make ${formatCount(detail.entriesAfter)} entries in this memory; the cap is ` +
        `${formatCount(detail.cap)}. Make room first: merge related entries into one, or drop entries that are no ` +
        'longer needed (engram index lists them), then run again.'
      );
    case 'account-exists':
      return `user ${detail.user} already exists; change the password with engram user set-password ${shellWord(detail.user)}`;
    case 'user-not-found':
      return `there is no user ${detail.user}: engram user list shows every user; engram user add ${shellWord(detail.user)} adds one.`;
    case 'drop-not-found':
      return `${detail.name} not found, nothing was dropped.${didYouMean(detail.suggestions)} engram index lists every entry.`;
    case 'restore-in-trash':
      return `${detail.name} is in the trash: run engram undrop ${detail.name} first, then restore.`;
    case 'recovered-over-cap':
      return (
        `${recoveredOverCapProblem(detail)}: engram show ${detail.name} --rev ${detail.revision} prints that revision; ` +
        `copy what you need from it into an entry within the caps (engram write); ${nothingDone(detail)}.`
      );
    case 'undrop-taken':
      return (
        `${detail.name} cannot be undropped: a live entry has taken the name since. Rename or drop the live one first ` +
        `(engram open ${detail.name} shows it), then undrop again.`
      );
    case 'undrop-missing':
      return `${detail.name} is not in the trash. engram trash lists what is.`;
    case 'purge-live':
      return `${detail.name} is a live entry: drop it first, or pass --force to purge it and all its history now.`;
    case 'no-such-revision':
      return (
        `${detail.name} has no revision ${detail.revision}; the revisions kept are ${keptRange(detail.first, detail.last)}. ` +
        `engram history ${detail.name} lists them.`
      );
    case 'import-too-large':
      return (
        `${formatCount(detail.count)} item(s) are over the entry cap of ${formatCount(detail.cap)} bytes: ` +
        `${listedSources(detail)}. Pass --split to split them into -2, -3 entries ` +
        '(--dry-run shows how); nothing was imported.'
      );
    case 'too-many-names':
      return (
        `engram open takes at most ${detail.max} names at once; ${detail.given} were given. ` +
        'Open the entries you need most first, then the rest with another engram open.'
      );
    case 'no-such-folder':
      return (
        `There is no memory at ${detail.path}: the folder ${detail.folder} does not exist, so nothing was created ` +
        '(a mistyped path must not start a new, empty memory). Check the path: --db, ENGRAM_DB, "db" in the config ' +
        "file, migrate's --to, or the arguments in your MCP client's config (Claude Desktop's claude_desktop_config.json, say). " +
        `To start a memory there, create the folder first (mkdir -p ${shellWord(detail.folder)}), then run again; ` +
        'or leave --db out to use the default path, whose folders Engram creates.'
      );
    case 'import-engram-export':
      return `${detail.path} is an Engram export: import it with engram import FILE, without --from; nothing was imported.`;
    default:
      return error.message;
  }
}

/** The revisions kept, as "3" or "1 to 3". */
function keptRange(first: number, last: number): string {
  return `${first}${first === last ? '' : ` to ${last}`}`;
}
