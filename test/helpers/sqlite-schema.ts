/**
 * A SQLite database as an older Engram left it, for the tests that upgrade one: the
 * schema's first migrations, and their count recorded as its version, as migrate() would.
 */

import type Database from 'better-sqlite3';
import { MIGRATIONS } from '../../src/storage/sqlite/migrations.js';

/** Brings a new database `db` to schema `version`: the first `version` migrations, that version recorded. */
export function migrateSqliteTo(db: Database.Database, version: number): void {
  for (const step of MIGRATIONS.slice(0, version)) db.exec(step);
  db.exec(`CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (${version})`);
}
