/**
 * Every SQL statement the PostgreSQL store runs, each prepared once per connection under
 * its own name. Every query is keyed by user; the index reads only the covering index
 * `entries_live`, never bodies.
 */

import { ENTRY_COLUMNS } from '../sql-rows.js';
import type { Statement } from './pool.js';

export const SQL = {
  index: 'SELECT name, size, description FROM entries WHERE user_id = $1 AND dropped_at IS NULL ORDER BY name',
  live: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = $1 AND name = $2 AND dropped_at IS NULL`,
  liveAmong: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = $1 AND name = ANY ($2::text[]) AND dropped_at IS NULL`,
  allLive: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = $1 AND dropped_at IS NULL ORDER BY name`,
  // Locked, so that purging expired trash cannot delete it while it is being restored.
  latestTrashed: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = $1 AND name = $2 AND dropped_at IS NOT NULL
     ORDER BY dropped_at DESC, id DESC LIMIT 1 FOR UPDATE`,
  trash: `SELECT ${ENTRY_COLUMNS}, dropped_at, dropped_by FROM entries WHERE user_id = $1 AND dropped_at IS NOT NULL
     ORDER BY dropped_at DESC, id DESC`,
  // The users row is the lock that serialises every write of one user, across servers.
  ensureUser: 'INSERT INTO users (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING',
  lockUser: 'SELECT total_bytes FROM users WHERE user_id = $1 FOR UPDATE',
  addUsage: 'UPDATE users SET total_bytes = total_bytes + $2 WHERE user_id = $1',
  insert: `INSERT INTO entries (user_id, name, description, body, size, created, updated, revision)
     VALUES ($1, $2, $3, $4, $5, $6, $6, $7) RETURNING id`,
  update: `UPDATE entries SET description = $3, body = $4, size = $5, updated = $6, revision = $7
     WHERE user_id = $1 AND id = $2`,
  drop: 'UPDATE entries SET dropped_at = $3, dropped_by = $4, revision = $5 WHERE user_id = $1 AND id = $2',
  undrop: 'UPDATE entries SET dropped_at = NULL, dropped_by = NULL, revision = $3 WHERE user_id = $1 AND id = $2',
  addRevision: `INSERT INTO revisions (user_id, entry_id, revision, operation, actor, at, description, body)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  trimRevisions: 'DELETE FROM revisions WHERE user_id = $1 AND entry_id = $2 AND revision <= $3',
  // The live copy if there is one, else the most recently dropped.
  history: `SELECT revision, operation, actor, at, description, body FROM revisions
     WHERE user_id = $1 AND entry_id = (
       SELECT id FROM entries WHERE user_id = $1 AND name = $2 ORDER BY dropped_at DESC NULLS FIRST, id DESC LIMIT 1)
     ORDER BY revision`,
  // Revisions go with their entry (ON DELETE CASCADE).
  purgeCopies: `DELETE FROM entries WHERE user_id = $1 AND name = $2 AND ($3::boolean OR dropped_at IS NOT NULL)
     RETURNING size, dropped_at`,
  purgeExpired: 'DELETE FROM entries WHERE dropped_at IS NOT NULL AND dropped_at <= $1',
} as const;

/** The statement `key` with its parameters, prepared once per connection. */
export function statement(key: keyof typeof SQL, ...values: unknown[]): Statement {
  return { name: `engram_${key}`, text: SQL[key], values };
}
