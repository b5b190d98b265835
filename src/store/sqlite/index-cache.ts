/**
 * The last index read of each user, kept while it is still the truth: until this
 * connection writes, or another connection (another process sharing the file) commits,
 * which SQLite reports through PRAGMA data_version. A model opens the index at the start
 * of every session; between writes, it then costs a lookup instead of a scan.
 */

import type { IndexRow } from '../../core/format.js';

/** Users whose index is kept at once; the least recently read is let go first. */
const MAX_USERS = 64;

export class IndexCache {
  private readonly rows = new Map<string, readonly IndexRow[]>();
  private dataVersion = -1;

  constructor(private readonly readDataVersion: () => number) {}

  /** The user's index, from the cache while valid, else from `load`. */
  get(user: string, load: () => IndexRow[]): readonly IndexRow[] {
    const version = this.readDataVersion();
    if (version !== this.dataVersion) {
      this.rows.clear();
      this.dataVersion = version;
    }
    let rows = this.rows.get(user);
    if (rows) {
      this.rows.delete(user);
    } else {
      rows = Object.freeze(load());
      if (this.rows.size >= MAX_USERS) this.rows.delete(this.rows.keys().next().value as string);
    }
    this.rows.set(user, rows);
    return rows;
  }

  /** This connection changed something: no kept index can be trusted. */
  invalidate(): void {
    this.rows.clear();
  }
}
