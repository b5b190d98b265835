/**
 * `POST /api/import` of an Engram export document, read as it arrives (import-stream.ts):
 * core's DocumentCheck takes each entry (and each of its revisions, before it) as it is
 * parsed and refuses the import at the first wrong one or as soon as a cap is passed, so a document of any size is never held
 * whole nor checked in one stretch; then the entries are imported in one transaction.
 */

import type { Caller } from '../../memory/memory.js';
import { isEngramError } from '../../memory/model/errors.js';
import type { Transfer } from '../../transfer/transfer.js';
import { type ImportOptions, notJson } from '../../transfer/transfer.js';
import { type BodySource, bodyTooLarge, readJsonStream, refusedWhileReading } from './import-stream.js';
import type { ApiResult } from './route.js';

export async function importDocument(
  transfer: Transfer,
  caller: Caller,
  source: BodySource,
  options: ImportOptions,
): Promise<ApiResult> {
  const check = transfer.check(options);
  try {
    const read = await readJsonStream(source, {
      arrays: ['entries', 'trash', 'entries.*.revisions', 'trash.*.revisions'],
      item: (array, value, index) => {
        if (array === 'entries') check.entry(value);
        else if (array === 'trash') check.trashEntry(value);
        else check.revision(array === 'entries.*.revisions' ? 'entries' : 'trash', value, index);
      },
    });
    if (read.kind === 'too-large') return bodyTooLarge(source.maxBytes);
    if (read.kind === 'invalid') throw notJson(read.reason);
    check.finish(read.top);
  } catch (error) {
    if (isEngramError(error)) return refusedWhileReading(error, source);
    throw error;
  }
  return { body: await transfer.import(caller, check, options) };
}
