/**
 * What the Store contract suites share, so each states only its own cases: how a backend
 * hands a suite a store, the clock tests move and the WriteRules every write is applied
 * under, the life of every store a test opens (closed and cleaned up after it), and the
 * writes, tokens, accounts, sessions, clients, grants and secrets the suites make.
 */

import { afterEach, beforeEach } from 'vitest';
import type { AccountRecord, SessionRecord } from '../../access/accounts/port.js';
import type { ClientRecord, GrantRecord, GrantSecretRecord } from '../../access/oauth/port.js';
import type { AccessStorage } from '../../access/port.js';
import type { TokenRecord } from '../../access/tokens/port.js';
import { writeRules } from '../../memory/model/apply.js';
import { appendText } from '../../memory/model/edit.js';
import type { IndexRow } from '../../memory/model/format.js';
import { DEFAULT_POLICY } from '../../memory/model/policy.js';
import type {
  Decide,
  ProposalStore,
  RevisionRecord,
  Store,
  StoreDump,
  Usage,
  UserUsage,
  WriteRules,
} from '../../memory/port.js';
import type { StorageBackend } from '../backend.js';

/**
 * A freshly opened, empty store: its memory, with whichever access ports the backend
 * offers beside it (`tokens`, `accounts`, `oauth`, `proposals`; a part the backend does not offer is
 * skipped, with its reason, through describeStoreContract's options). The suite closes
 * it; `cleanup` removes whatever `open` created.
 */
export interface OpenedStore {
  readonly store: Store & Partial<AccessStorage> & { readonly proposals?: ProposalStore };
  readonly cleanup?: () => Promise<void>;
}

/**
 * Opens a new, empty store of the backend under test: called once or more per test. A
 * store takes no clock and no history limits; every write brings them (WriteRules).
 */
export type OpenStore = () => Promise<OpenedStore>;

/** The `port` the store offers beside its memory; a backend without it must skip the parts that need it. */
export function accessPort<Port extends keyof AccessStorage>(
  store: Partial<AccessStorage>,
  port: Port,
): AccessStorage[Port] {
  const offered = store[port];
  if (offered === undefined) {
    throw new Error(
      `this store offers no ${port} port: skip the parts that need it, as describeStoreContract(name, open, { skip: { ${port}: 'why' } })`,
    );
  }
  return offered;
}

/** The store, checked to offer every access port beside its memory, as the parts that copy them need. */
export function withAccess(store: OpenedStore['store']): StorageBackend {
  for (const port of ['tokens', 'accounts', 'oauth'] as const) accessPort(store, port);
  if (store.proposals === undefined) throw new Error('this store offers no proposals port: a dump copies them');
  return store as StorageBackend;
}

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
  keep(opening: Promise<OpenedStore>): Promise<OpenedStore['store']>;
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

  async function keep(opening: Promise<OpenedStore>): Promise<OpenedStore['store']> {
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

/** Appends `text` as memory_write does (edit.ts, appendText), keeping the description unless `description` is given. */
export function append(text: string, description?: string): Decide {
  return (current) => ({
    kind: 'put',
    operation: current ? 'append' : 'create',
    description: description ?? current?.description ?? 'appended text',
    body: appendText(current?.body ?? '', text),
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

/** `dump` without anything of `user`'s (their entries, counters and proposals): a load that leaves them out. */
export function withoutUser(dump: StoreDump, user: string): StoreDump {
  return {
    ...dump,
    entries: dump.entries.filter((entry) => entry.user !== user),
    users: dump.users.filter((usage) => usage.user !== user),
    proposals: dump.proposals.filter((proposal) => proposal.user !== user),
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
    review: false,
    ...overrides,
  };
}

/** A hex-looking hash made from `seed`, so that each record's differs. */
function hashOf(seed: string): string {
  return seed.padEnd(64, '0');
}

/** The account of `user`, with a password hash. */
export function account(user: string, overrides: Partial<AccountRecord> = {}): AccountRecord {
  return { user, passwordHash: `scrypt$${user}`, created: START, updated: START, ...overrides };
}

/** A browser session of alice's named by `id`, its hash made from the id. */
export function session(id: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    hash: hashOf(`s-${id}`),
    user: 'alice',
    agent: `browser ${id}`,
    created: START,
    expires: START + 3_600_000,
    lastUsed: undefined,
    ...overrides,
  };
}

/** A registered OAuth client named by `id`. */
export function client(id: string, overrides: Partial<ClientRecord> = {}): ClientRecord {
  return {
    id,
    name: `App ${id}`,
    redirectUris: [`https://${id}.example/callback`, 'http://127.0.0.1/callback'],
    created: START,
    metadata: JSON.stringify({ client_name: `App ${id}` }),
    ...overrides,
  };
}

/** A grant of alice's to client c1, named by `id`. */
export function grant(id: string, overrides: Partial<GrantRecord> = {}): GrantRecord {
  return {
    id,
    user: 'alice',
    clientId: 'c1',
    clientName: 'App c1',
    readOnly: false,
    resource: 'https://engram.example/mcp',
    created: START,
    lastUsed: undefined,
    review: false,
    ...overrides,
  };
}

/** A secret (an authorization code unless told) of the grant `grantId`, its hash made from `seed`. */
export function grantSecret(
  seed: string,
  grantId: string,
  overrides: Partial<GrantSecretRecord> = {},
): GrantSecretRecord {
  return {
    hash: hashOf(`g-${seed}`),
    grantId,
    kind: 'code',
    created: START,
    expires: START + 60_000,
    used: undefined,
    data: '',
    ...overrides,
  };
}
