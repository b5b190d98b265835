/**
 * The MCP floor on Engram's own SQLite schema (floor-server.ts `sqlite-schema`): the
 * floor's server and group commit (floor-memory.ts) over Engram's statements with no code
 * around them (engram-statements.ts), in a database Engram's migrations made. Beside the
 * floor on its own tables (floor-sqlite.ts), its share of the floor is what Engram's
 * schema costs these calls over HTTP: the most Engram's code could reach on that schema,
 * before its search index catches up, which this floor never does.
 */

import { openEngramStatements } from './engram-statements.js';
import { type FloorMemory, type FloorSeed, groupCommitted } from './floor-memory.js';

export function openEngramSchemaFloor(path: string, seed: FloorSeed): FloorMemory {
  const statements = openEngramStatements(path);
  for (const { user, entries } of seed) statements.seed(user, entries);
  return {
    open: async (user, name) => statements.open(user, name),
    append: groupCommitted((appends) =>
      statements.transaction(() => appends.map(({ user, name, line }) => statements.append(user, name, line))),
    ),
    close: async () => statements.close(),
  };
}
