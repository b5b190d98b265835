/**
 * Whether a database's recorded schema version is the one this Engram writes, for the
 * readiness probe of each SQL backend (StoreHealth.ready): a database another, newer
 * Engram upgraded while this one ran, or one whose version table is gone, is not ready.
 */

import { EngramError } from '../memory/model/errors.js';

/** Throws STORE_UNAVAILABLE in words unless `recorded` is `current`. */
export function assertSchemaCurrent(recorded: number | undefined, current: number): void {
  if (recorded === current) return;
  throw new EngramError(
    'STORE_UNAVAILABLE',
    recorded === undefined
      ? `the database records no schema version (this Engram writes version ${current}): it is not an Engram database, or it was emptied; restart engram serve to set it up`
      : `the database is at schema version ${recorded}, this Engram writes version ${current}: ${recorded > current ? 'a newer Engram upgraded it; upgrade this one' : 'restart engram serve to upgrade it'}`,
  );
}
