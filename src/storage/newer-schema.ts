/**
 * The refusal of a database that a newer Engram has upgraded, worded once for both SQL
 * backends: Engram never downgrades a schema, and an older Engram cannot know what a newer
 * one's tables mean, so it opens nothing, changes nothing, and says which version it found,
 * which it knows, and that the way forward is the newer Engram.
 */

import { EngramError } from '../memory/model/errors.js';

/** `database` names it for a person: "The memory's database /path/memory.db", "The PostgreSQL database engram". */
export function newerSchemaError(database: string, found: number, known: number): EngramError {
  return new EngramError(
    'STORE_UNAVAILABLE',
    `${database} is at schema version ${found}, newer than this Engram knows (${known}): a newer Engram ` +
      'has upgraded it, and this one cannot read it safely. Nothing was changed. Upgrade Engram to the version ' +
      'that upgraded it, or a later one (npm install -g engram@latest, npx -y engram@latest, or the newest ' +
      'container image), and run that: Engram never downgrades a database.',
  );
}
