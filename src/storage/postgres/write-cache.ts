/**
 * What this process last knew of the users it writes for: a user's change counter, their
 * counters, and the live entry (or its absence) of each name it read or wrote at that
 * counter. A write of a known name is decided on it without a read — one round trip, the
 * save — and the save commits only if the counter is still that one (store.ts), so a view
 * that another writer made stale costs a round trip, never an update. Bounded by the bytes
 * of the bodies it holds; the users written longest ago go first.
 */

import type { Usage } from '../../memory/port.js';
import type { EntryRow } from '../sql-rows.js';

/** A user's state at their change counter `changes`, and one name's live entry then (undefined: none). */
export interface Known {
  readonly changes: number;
  readonly usage: Usage;
  readonly historyBytes: number;
  readonly row: EntryRow | undefined;
}

interface View {
  changes: number;
  usage: Usage;
  historyBytes: number;
  readonly rows: Map<string, EntryRow | null>;
  bytes: number;
}

export class WriteCache {
  /** In the order the users were last written: the first is evicted first. */
  private readonly users = new Map<string, View>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(user: string, name: string): Known | undefined {
    const view = this.users.get(user);
    const row = view?.rows.get(name);
    if (!view || row === undefined) return undefined;
    return { changes: view.changes, usage: view.usage, historyBytes: view.historyBytes, row: row ?? undefined };
  }

  /** What a read found: the user at counter `known.changes`, and `name`'s live entry then. */
  remember(user: string, name: string, known: Known): void {
    this.keep(user, name, known, known.changes);
  }

  /**
   * What this process's own save made, moving the counter by one from `known.changes - 1`:
   * it changed that name alone, so what was known of the user's other names then stays true.
   */
  saved(user: string, name: string, known: Known): void {
    this.keep(user, name, known, known.changes - 1);
  }

  /** Keeps `name`'s entry at `known.changes`, with what was known of the others at counter `from`. */
  private keep(user: string, name: string, known: Known, from: number): void {
    let view = this.users.get(user);
    this.users.delete(user);
    if (view && (view.changes === known.changes || view.changes === from)) {
      view.changes = known.changes;
      view.usage = known.usage;
      view.historyBytes = known.historyBytes;
    } else {
      if (view) this.bytes -= view.bytes;
      view = {
        changes: known.changes,
        usage: known.usage,
        historyBytes: known.historyBytes,
        rows: new Map(),
        bytes: 0,
      };
    }
    const added = (known.row?.body.length ?? 0) - (view.rows.get(name)?.body.length ?? 0);
    view.rows.set(name, known.row ?? null);
    view.bytes += added;
    this.bytes += added;
    this.users.set(user, view);
    for (const [oldest, stale] of this.users) {
      if (this.bytes <= this.maxBytes) break;
      this.users.delete(oldest);
      this.bytes -= stale.bytes;
    }
  }

  /** The user changed, or may have, in a way this process did not see: read them again. */
  forget(user: string): void {
    const view = this.users.get(user);
    if (!view) return;
    this.users.delete(user);
    this.bytes -= view.bytes;
  }

  clear(): void {
    this.users.clear();
    this.bytes = 0;
  }
}
