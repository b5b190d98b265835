/**
 * What the Store contract suites share, so each states only its own cases: how a backend
 * hands a suite a store, the clock tests move and the WriteRules every write is applied
 * under, the life of every store a test opens (closed and cleaned up after it), and the
 * writes and tokens the suites make.
 */

import { afterEach, beforeEach } from 'vitest';
import { writeRules } from '../core/apply.js';
import type { IndexRow } from '../core/format.js';
import { DEFAULT_POLICY } from '../core/policy.js';
import type {
  Decide,
  RevisionRecord,
  Store,
  StoreDump,
  TokenRecord,
  Usage,
  UserUsage,
  WriteRules,
} from '../core/store.js';

/** A freshly opened, empty store. The suite closes it; `cleanup` removes whatever `open` created. */
export interface OpenedStore {
  readonly store: Store;
  readonly cleanup?: () => Promise<void>;
}

/**
 * Opens a new, empty store of the backend under test: called once or more per test. A
 * store takes no clock and no history limits; every write brings them (WriteRules).
 */
export type OpenStore = () => Promise<OpenedStore>;

export const START = Date.UTC(2025, 0, 1);

/** Revisions per entry the suites' writes keep, unless a test asks for fewer. */
export const TEST_HISTORY_LIMIT = 100;

/** The time a suite's stores read: back at START before each test, moved by the tests. */
export interface TestClock {
  time: number;
  readonly now: () => number;
}

/**
 * Registers in the calling describe block the life of the stores its tests open: the
 * clock goes back to START before each test, and every store passed to `keep` is closed,
 * then cleaned up, after it.
 */
export function storesPerTest(): {
  clock: TestClock;
  /** What the tests' writes are applied under: the test clock, TEST_HISTORY_LIMIT and the default history cap. */
  rules: WriteRules;
  keep(opening: Promise<OpenedStore>): Promise<Store>;
} {
  const clock: TestClock = { time: START, now: () => clock.time };
  const rules = writeRules({ historyLimit: TEST_HISTORY_LIMIT, historyCap: DEFAULT_POLICY.historyCap }, clock.now);
  const opened: OpenedStore[] = [];

  beforeEach(() => {
    clock.time = START;
  });

  afterEach(async () => {
    for (const { store, cleanup } of opened.splice(0)) {
      await store.close();
      await cleanup?.();
    }
  });

  async function keep(opening: Promise<OpenedStore>): Promise<Store> {
    const store = await opening;
    opened.push(store);
    return store.store;
  }

  return { clock, rules, keep };
}

type PutOperation = Exclude<RevisionRecord['operation'], 'drop' | 'undrop'>;

/** Writes the entry whole, recorded as `operation` (create when the entry is new, else replace). */
export function put(body: string, description = 'a description', operation?: PutOperation): Decide {
  return (current) => ({
    kind: 'put',
    operation: operation ?? (current ? 'replace' : 'create'),
    description,
    body,
  });
}

/** Appends one line, keeping the description: the write many clients race on. */
export function appendLine(line: string): Decide {
  return (current) => ({
    kind: 'put',
    operation: current ? 'append' : 'create',
    description: current?.description ?? 'appended lines',
    body: `${current?.body ?? ''}${line}\n`,
  });
}

export const none: Decide = () => ({ kind: 'none' });
export const drop: Decide = () => ({ kind: 'drop' });

export function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The usage of a user whose index is `rows`: the bytes of every name, description and body, and the count. */
export function footprint(rows: readonly IndexRow[]): Usage {
  return {
    totalBytes: rows.reduce((sum, row) => sum + bytes(row.name) + bytes(row.description) + row.size, 0),
    entries: rows.length,
  };
}

/**
 * Every user's usage counted again from the entries of `dump`: live entries for the usage,
 * the description and body of every kept revision (of live and dropped entries) for the
 * history. A store's counters must equal it.
 */
export function recount(dump: StoreDump): UserUsage[] {
  const users = new Set([...dump.users.map((usage) => usage.user), ...dump.entries.map((entry) => entry.user)]);
  return [...users].sort().map((user) => {
    const entries = dump.entries.filter((entry) => entry.user === user);
    const live = entries.filter((entry) => entry.droppedAt === null);
    const revisions = entries.flatMap((entry) => entry.revisions);
    return {
      user,
      ...footprint(live),
      historyBytes: revisions.reduce((sum, record) => sum + bytes(record.description) + bytes(record.body), 0),
    };
  });
}

/** A token of alice's named by `id`, its hash made from the id so each differs. */
export function token(id: string, overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    id,
    user: 'alice',
    label: `label ${id}`,
    readOnly: false,
    hash: id.padEnd(64, '0'),
    created: START,
    lastUsed: undefined,
    ...overrides,
  };
}
