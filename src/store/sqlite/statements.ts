/**
 * Every SQL statement the SQLite store runs, prepared once per connection. Queries are
 * keyed by user; the index reads only the covering index, never bodies.
 */

import type Database from 'better-sqlite3';
import { ENTRY_COLUMNS } from '../sql-rows.js';

export const SQL = {
  index:
    'SELECT name, size, description FROM entries INDEXED BY entries_index WHERE user_id = ? AND dropped_at IS NULL ORDER BY name',
  live: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = ? AND name = ? AND dropped_at IS NULL`,
  allLive: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = ? AND dropped_at IS NULL ORDER BY name`,
  latestTrashed: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE user_id = ? AND name = ? AND dropped_at IS NOT NULL
       ORDER BY dropped_at DESC, id DESC LIMIT 1`,
  copies: `SELECT id, user_id, size, dropped_at FROM entries WHERE user_id = ? AND name = ?`,
  trash: `SELECT ${ENTRY_COLUMNS}, dropped_at, dropped_by FROM entries WHERE user_id = ? AND dropped_at IS NOT NULL
       ORDER BY dropped_at DESC, id DESC`,
  expiredTrash: 'SELECT id, user_id, size, dropped_at FROM entries WHERE dropped_at IS NOT NULL AND dropped_at <= ?',
  usage: 'SELECT total_bytes FROM users WHERE user_id = ?',
  addUsage: `INSERT INTO users (user_id, total_bytes) VALUES (@user, @delta)
       ON CONFLICT (user_id) DO UPDATE SET total_bytes = total_bytes + @delta`,
  insert: `INSERT INTO entries (user_id, name, description, body, size, created, updated, revision)
       VALUES (@user, @name, @description, @body, @size, @at, @at, @revision)`,
  update: `UPDATE entries SET description = @description, body = @body, size = @size, updated = @at, revision = @revision
       WHERE id = @id`,
  drop: 'UPDATE entries SET dropped_at = @at, dropped_by = @actor, revision = @revision WHERE id = @id',
  undrop: 'UPDATE entries SET dropped_at = NULL, dropped_by = NULL, revision = @revision WHERE id = @id',
  deleteEntry: 'DELETE FROM entries WHERE id = ?',
  deleteRevisions: 'DELETE FROM revisions WHERE entry_id = ?',
  addRevision: `INSERT INTO revisions (entry_id, revision, operation, actor, at, description, body)
       VALUES (@id, @revision, @operation, @actor, @at, @description, @body)`,
  trimRevisions: 'DELETE FROM revisions WHERE entry_id = @id AND revision <= @keepAfter',
  revisions:
    'SELECT revision, operation, actor, at, description, body FROM revisions WHERE entry_id = ? ORDER BY revision',
} as const;

export type Statements = { readonly [K in keyof typeof SQL]: Database.Statement };

export function prepareStatements(db: Database.Database): Statements {
  return Object.fromEntries(Object.entries(SQL).map(([key, sql]) => [key, db.prepare(sql)])) as Statements;
}
