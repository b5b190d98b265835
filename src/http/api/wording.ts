/**
 * Refusals in the REST API's own words. Core words a refusal for the model, and the
 * recovery refusals in no door's words; a script or the web UI calling /api is told the
 * route to call, so every refusal that says how to call again is worded here, by route,
 * from its detail. The others keep core's message.
 */

import type { EngramError } from '../../memory/model/errors.js';
import { didYouMean } from '../../memory/model/format.js';
import { formatCount } from '../../memory/model/text.js';
import { nothingDone, recoveredOverCapProblem } from '../../memory/recovery-caps.js';
import { listedSources } from '../../transfer/bridges/run.js';

/** The API path of an entry, as its routes spell it. */
function entryPath(name: string): string {
  return `/api/entries/${name}`;
}

export function apiMessage(error: EngramError): string {
  const detail = error.detail;
  switch (detail?.reason) {
    case 'restore-in-trash':
      return `${detail.name} is in the trash: undrop it first (POST /api/trash/${detail.name}/undrop), then restore.`;
    case 'recovered-over-cap':
      return (
        `${recoveredOverCapProblem(detail)}: GET ${entryPath(detail.name)}/history shows revision ${detail.revision}; ` +
        `copy what you need from it into an entry within the caps; ${nothingDone(detail)}.`
      );
    case 'undrop-taken':
      return (
        `${detail.name} cannot be undropped: a live entry has taken the name since. Drop the live one first ` +
        `(GET ${entryPath(detail.name)} shows it), then undrop again.`
      );
    case 'purge-live':
      return `${detail.name} is a live entry, not in the trash: drop it first (DELETE ${entryPath(detail.name)}), then purge it.`;
    case 'undrop-missing':
      return `${detail.name} is not in the trash. GET /api/trash lists what is.`;
    case 'no-such-revision': {
      const kept = `${detail.first}${detail.first === detail.last ? '' : ` to ${detail.last}`}`;
      return (
        `${detail.name} has no revision ${detail.revision}; the revisions kept are ${kept}. ` +
        `GET ${entryPath(detail.name)}/history lists them.`
      );
    }
    case 'user-cap':
      return (
        `${detail.name} would bring this memory to ${formatCount(detail.totalAfter)} bytes (names, descriptions and bodies); ` +
        `the cap is ${formatCount(detail.cap)}. Make room first: shorten or drop entries that are no longer needed ` +
        '(GET /api/entries shows their sizes), then try again.'
      );
    case 'entry-cap':
      return (
        `${detail.name} would make ${formatCount(detail.entriesAfter)} entries in this memory; the cap is ` +
        `${formatCount(detail.cap)}. Make room first: drop entries that are no longer needed ` +
        '(GET /api/entries lists them), then try again.'
      );
    case 'create-without-description':
      return `${detail.name} needs a description: one line on what it covers.`;
    case 'empty-description':
      return `The description of ${detail.name} is empty once white space is folded: write one line on what it covers.`;
    case 'nothing-to-do':
      return 'Nothing to save: send the description, the body, or both.';
    case 'drop-not-found':
      return `${detail.name} not found, nothing was dropped.${didYouMean(detail.suggestions)} GET /api/entries lists every entry.`;
    case 'import-too-large':
      return (
        `${formatCount(detail.count)} item(s) are over the entry cap of ${formatCount(detail.cap)} bytes: ` +
        `${listedSources(detail)}. Send ?split=1 to split them into -2, -3 entries ` +
        '(with ?dryRun=1 to see how); nothing was imported.'
      );
    case 'import-map-group':
      return (
        `options.map ${JSON.stringify({ [detail.type]: detail.group })}: "${detail.group}" is not a group of this memory ` +
        `(groups: ${detail.groups.join(', ')}); nothing was imported.`
      );
    case 'import-engram-export':
      return `${detail.path} is an Engram export: send it to POST /api/import, without ?from=; nothing was imported.`;
    default:
      return error.message;
  }
}
