/**
 * The storage accelerators, each behind one named switch, all named here. Each is a
 * faster way to an answer the plain path also gives, kept because `npm run bench` says it
 * pays (DESIGN §7); switched off, the store takes the plain path, the reference the
 * accelerator must agree with. What each must keep to agree is written in
 * docs/accelerators.md ("Storage") and atop its test. A store takes `accelerators`, a
 * partial record of these switches: a switch not given keeps its default.
 */

/** The SQLite store's accelerators and their defaults. */
export const SQLITE_ACCELERATORS = {
  /** Concurrent writes share one transaction and one fsync, each in a savepoint (group-commit.ts). Off: one transaction each. */
  groupCommit: true,
  /**
   * The search index catches up in a worker thread on a connection of its own, taking turns
   * with the loop's writes through a shared-memory gate (search-worker.ts, write-gate.ts);
   * for a long-running server (`engram serve` turns it on), a file database only. Off: the
   * event loop catches up (search-backlog.ts).
   */
  searchWorker: false,
  /** The last index read of each user, patched after this connection's writes (index-cache.ts). Off: every index is read whole. */
  indexCache: true,
  /** One actor's activity and the actors' counts read a stretch of history at a time (activity-walk.ts). Off: one statement. */
  activityWalk: true,
} as const satisfies Record<string, boolean>;

/** The PostgreSQL store's accelerators and their defaults. */
export const POSTGRES_ACCELERATORS = {
  /**
   * A plain write is decided without a lock and saved by one statement that commits only if
   * the user's change counter did not move (store.ts, primitives.ts save). Off: every write
   * locks the user's row in a transaction.
   */
  optimisticSave: true,
  /** What a write was decided on, remembered for the user's next write (write-cache.ts). Off: read each time. */
  writeCache: true,
  /** Concurrent reads (entries, what writes are decided on, tokens) go together, in one statement (batch.ts). Off: one each. */
  readBatcher: true,
  /**
   * One process's writes of one user go one at a time (user-queue.ts); with optimisticSave
   * on too, those waiting behind another share one transaction and its commit
   * (shared-commit.ts). Off: they race, and the database settles it, each in a commit of its own.
   */
  userQueue: true,
} as const satisfies Record<string, boolean>;

export type SqliteAcceleratorName = keyof typeof SQLITE_ACCELERATORS;
export type PostgresAcceleratorName = keyof typeof POSTGRES_ACCELERATORS;
export type AcceleratorName = SqliteAcceleratorName | PostgresAcceleratorName;

/** Switches given to a store: true on, false off, absent its default. */
export type Accelerators<Name extends AcceleratorName = AcceleratorName> = {
  readonly [K in Name]?: boolean | undefined;
};

/** Every storage accelerator's name. */
export const ACCELERATOR_NAMES = [
  ...Object.keys(SQLITE_ACCELERATORS),
  ...Object.keys(POSTGRES_ACCELERATORS),
] as readonly AcceleratorName[];

/** Every accelerator off: the plain path alone (the contract suite runs a store so, beside the default). */
export const NO_ACCELERATORS: { readonly [K in AcceleratorName]: false } = Object.fromEntries(
  ACCELERATOR_NAMES.map((name) => [name, false]),
) as { readonly [K in AcceleratorName]: false };

/** Each switch of `defaults` as `given` sets it, or its default. */
export function switchesOf<Name extends AcceleratorName>(
  defaults: { readonly [K in Name]: boolean },
  given: Accelerators | undefined,
): { readonly [K in Name]: boolean } {
  return Object.fromEntries(
    Object.entries<boolean>(defaults).map(([name, on]) => [name, given?.[name as Name] ?? on]),
  ) as { readonly [K in Name]: boolean };
}
