/**
 * The last index read of each user, kept while it is still the truth, and maintained
 * rather than rebuilt after this connection's own writes: a write only names the entry
 * it touched, and the next read re-reads those few rows (one indexed lookup each) and
 * patches them into the kept index (memory/model/index-lines.ts: only the chunk of lines that
 * holds a changed row is joined again), instead of building every row and line again. What
 * it re-reads is what was committed, so a write rolled back leaves no trace here. When
 * another connection committed (another process sharing the file, or the search worker),
 * which SQLite reports through PRAGMA data_version, a kept index is checked against its
 * user's change counter (users.changes, moved by every change of theirs and never reused:
 * dump.ts) before it is trusted again: a commit of another user's, or of the search index
 * alone, leaves it kept. The whole index is read again when the counter moved in a way
 * this cache did not follow, when a change it cannot follow (a purge, a load) invalidates
 * it, or when too many names changed.
 */

import type { IndexRow } from '../../memory/model/format.js';
import { KeptIndex } from '../../memory/model/index-lines.js';

/** Users whose index is kept at once; the least recently read is let go first. */
const MAX_USERS = 64;

/** Past this many changed names, reading the whole index again is no dearer than patching. */
const MAX_PATCHED = 256;

/** SQLite's order of TEXT (BINARY: UTF-8 bytes, i.e. code points), not JavaScript's (UTF-16 code units). */
export function compareNames(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const x = a.charCodeAt(index);
    const y = b.charCodeAt(index);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Surrogates (code points past U+FFFF) sort after U+E000–U+FFFF in code point order. */
function codePointRank(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

interface Kept {
  readonly index: KeptIndex;
  /** Names this connection wrote since `index` was read. */
  readonly changed: Set<string>;
  /** The user's change counter that `index`, with `changed` patched in, stands for; undefined: unknown. */
  changes: number | undefined;
  /** Another connection committed since the counter was last checked. */
  unchecked: boolean;
}

/** What the cache reads of the database, each in a statement of its own. */
export interface IndexCacheReads {
  /** PRAGMA data_version: moves when another connection committed. */
  dataVersion(): number;
  /** The user's change counter (0 when the user has none yet). */
  changesOf(user: string): number;
}

export class IndexCache {
  private readonly kept = new Map<string, Kept>();
  private dataVersion = -1;

  constructor(private readonly reads: IndexCacheReads) {}

  /**
   * The user's index: kept, patched with the rows `lookup` reads for the names written
   * since (undefined: no live entry of that name), or read whole by `load`.
   */
  get(user: string, load: () => IndexRow[], lookup: (name: string) => IndexRow | undefined): readonly IndexRow[] {
    const version = this.reads.dataVersion();
    if (version !== this.dataVersion) {
      for (const kept of this.kept.values()) kept.unchecked = true;
      this.dataVersion = version;
    }
    let kept = this.kept.get(user);
    if (kept?.unchecked) {
      if (kept.changes !== undefined && kept.changes === this.reads.changesOf(user)) kept.unchecked = false;
      else kept = undefined;
    }
    let index: KeptIndex;
    let changes = kept?.changes;
    if (kept && kept.changed.size === 0) {
      index = kept.index;
      this.kept.delete(user);
    } else {
      if (kept && kept.changed.size <= MAX_PATCHED) {
        index = kept.index.patched(
          Array.from(kept.changed, (name) => ({ name, row: lookup(name) })),
          compareNames,
        );
      } else {
        // The counter first: a change committed between the two reads makes it older than
        // the rows, which costs one more whole read later, never a stale index.
        changes = this.reads.changesOf(user);
        index = KeptIndex.of(load());
      }
      this.kept.delete(user);
      if (this.kept.size >= MAX_USERS) this.kept.delete(this.kept.keys().next().value as string);
    }
    this.kept.set(user, { index, changed: new Set(), changes, unchecked: false });
    return index.rows;
  }

  /** This connection is writing the user's entry `name` (committed or not: the next read looks). */
  touched(user: string, name: string): void {
    this.kept.get(user)?.changed.add(name);
  }

  /**
   * This connection's write, in its transaction, moved the user's change counter to
   * `changes` (by one): the kept index follows it when it stood for the counter before.
   */
  counted(user: string, changes: number): void {
    const kept = this.kept.get(user);
    if (kept) kept.changes = kept.changes === changes - 1 ? changes : undefined;
  }

  /** A write of the user's failed, and may have moved the counter in a transaction rolled back: their index is read again. */
  forget(user: string): void {
    this.kept.delete(user);
  }

  /** This connection changed something it cannot name: no kept index can be trusted. */
  invalidate(): void {
    this.kept.clear();
  }
}
