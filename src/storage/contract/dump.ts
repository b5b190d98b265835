/**
 * The dump part of the Store contract (DumpStore: isEmpty, dump and load, on which
 * `engram migrate` stands), written once and run against every backend by
 * `describeStoreContract` (index.ts). A dump copies the whole database, the records of
 * the access ports (tokens, accounts, OAuth) with the entries, so this part needs them
 * all: a backend that skips one skips this part too. A load is proved lossless by dumping the copy again and by reading it through every
 * other method. Nothing here may know which backend it is testing.
 */

import { describe, expect, it } from 'vitest';
import {
  type BatchedDump,
  type Caller,
  type DumpedEntry,
  loadInBatchesOf,
  type ProposalRecord,
  type StoreDump,
} from '../../memory/port.js';
import type { StorageBackend } from '../backend.js';
import {
  account,
  appendLine,
  client,
  drop,
  grant,
  grantSecret,
  type OpenStore,
  put,
  recount,
  START,
  session,
  storesPerTest,
  token,
  withAccess,
} from './setup.js';

const desktop: Caller = { user: 'alice', label: 'claude-desktop' };
const cli: Caller = { user: 'alice', label: 'cli' };
const bob: Caller = { user: 'bob', label: 'bob "laptop", {token}' };

/** Text that a careless encoding (CSV, array literals, JSON) would mangle. */
const AWKWARD = 'quote " backslash \\ braces {a,b} comma, NULL\nnull\ttab ✓ é 🙂\n';

const EMPTY: StoreDump = {
  entries: [],
  users: [],
  tokens: [],
  accounts: [],
  clients: [],
  grants: [],
  grantSecrets: [],
  proposals: [],
};

/** What fill() keeps beside the entries and tokens, each list in the order of its putting. */
const ACCOUNTS = [
  account('bob', { passwordHash: undefined, created: START + 3_000, updated: START + 3_000 }),
  account('alice', {
    passwordHash: 'scrypt$N=16384,r=8,p=1$c2FsdA$aGFzaA',
    created: START + 1_000,
    updated: START + 4_000,
  }),
];
const CLIENTS = [
  client('c-late', { created: START + 6_000 }),
  client('c-early', { name: 'App "early", {x} ✓', redirectUris: ['http://localhost/cb'], created: START + 5_000 }),
];
const GRANTS = [
  grant('g-alice', {
    clientId: 'c-early',
    clientName: 'App "early", {x} ✓',
    review: true,
    created: START + 8_000,
    lastUsed: START + 9_000,
  }),
  grant('g-bob', { user: 'bob', clientId: 'c-late', readOnly: true, created: START + 7_000 }),
];
const SECRETS = {
  code: grantSecret('b-code', 'g-alice', { data: AWKWARD }),
  access: grantSecret('a-access', 'g-alice', { kind: 'access', created: START + 20_000, expires: START + 3_620_000 }),
  refresh: grantSecret('c-refresh', 'g-alice', {
    kind: 'refresh',
    created: START + 20_000,
    expires: START + 99_000_000,
  }),
  bobCode: grantSecret('d-code', 'g-bob'),
} as const;

/** A dump of `count` live entries of alice's, two revisions each, with ids that leave gaps. */
function manyEntries(count: number): StoreDump {
  const entries = Array.from({ length: count }, (_, i) => {
    const body = `line ${i}\nline ${i} again\n`;
    return {
      id: 10 + i * 3,
      user: 'alice',
      name: `topics/n${String(i).padStart(5, '0')}`,
      description: `entry ${i}`,
      body,
      size: Buffer.byteLength(body),
      created: START + i,
      updated: START + i + 1,
      revision: 2,
      droppedAt: null,
      droppedBy: null,
      revisions: [
        {
          revision: 1,
          operation: 'create' as const,
          actor: 'cli',
          at: START + i,
          description: `entry ${i}`,
          body: `line ${i}\n`,
        },
        { revision: 2, operation: 'append' as const, actor: 'cli', at: START + i + 1, description: `entry ${i}`, body },
      ],
      opened: i % 3 === 0 ? null : START + 10_000 + i,
    };
  });
  const dump: StoreDump = { ...EMPTY, entries, openedSince: START - 5_000 };
  return { ...dump, users: recount(dump) };
}

/**
 * `dump` as a dump in batches hands it over: its total, then its entries cut at `sizes`
 * (the last size repeated), then the rest; `fail`, when given, rejects in place of the
 * batch after `fail.after` batches (the source failing, or a check refusing, mid-copy).
 */
function inBatches(dump: StoreDump, sizes: readonly number[], fail?: { after: number; error: Error }): BatchedDump {
  return async (batches) => {
    const { entries, ...tables } = dump;
    batches.total(entries.length);
    let handed = 0;
    for (let start = 0, size = sizes[0]!; start < entries.length; start += size, size = sizes[handed] ?? size) {
      if (fail && handed === fail.after) throw fail.error;
      await batches.batch(entries.slice(start, start + size));
      handed++;
    }
    if (fail && handed === fail.after) throw fail.error;
    return tables;
  };
}

/** Changes held for review: a write with every text, with none (a drop), and another user's. */
const PROPOSALS: readonly ProposalRecord[] = [
  {
    id: 'p-write',
    user: 'alice',
    name: 'topics/editor',
    operation: 'replace',
    description: 'Editor, "keys"',
    new: AWKWARD,
    old: 'Uses Helix.',
    baseRevision: 2,
    proposedDescription: 'Editor, "keys"',
    proposedBody: `${AWKWARD}\nTabs, width 4.\n`,
    actor: 'Claude "desktop"',
    at: START + 11_000,
  },
  {
    id: 'p-drop',
    user: 'alice',
    name: 'areas/back',
    operation: 'drop',
    description: undefined,
    new: undefined,
    old: undefined,
    baseRevision: 3,
    proposedDescription: 'a description',
    proposedBody: 'back\n',
    actor: 'Claude',
    at: START + 12_000,
  },
  {
    id: 'p-bob',
    user: 'bob',
    name: 'people/ada',
    operation: 'describe',
    description: 'Ada',
    new: undefined,
    old: undefined,
    baseRevision: 1,
    proposedDescription: 'Ada',
    proposedBody: AWKWARD,
    actor: 'bob app',
    at: START + 13_000,
  },
];

export function describeDumpContract(label: string, open: OpenStore): void {
  describe(`Store dump contract: ${label}`, () => {
    const { clock, rules, keep } = storesPerTest();

    /** A fresh, empty store on the shared clock; the teardown closes it. */
    async function fresh(): Promise<StorageBackend> {
      return withAccess(await keep(open()));
    }

    /**
     * Two users' memories with everything a store keeps: edits by several actors, awkward
     * text, two dropped copies of one name (dropped at the same moment), a re-created
     * name, an undrop, tokens of every kind, accounts (one without a password) with a
     * session, clients, and grants holding codes and tokens, used and not.
     */
    async function fill(store: StorageBackend): Promise<void> {
      const at = async (seconds: number, step: () => Promise<unknown>) => {
        clock.time = START + seconds * 1_000;
        await step();
      };
      await at(1, () => store.mutate(desktop, 'topics/editor', put('Uses Helix.\n', 'Editor, keyboard'), rules));
      await at(2, () => store.mutate(desktop, 'topics/editor', appendLine('Tabs, width 4.'), rules));
      await at(3, () => store.mutate(bob, 'people/ada', put(AWKWARD, 'Ada, "the" {first}'), rules));
      await at(4, () => store.mutate(desktop, 'areas/old', put('first copy\n'), rules));
      await at(5, () => store.mutate(cli, 'areas/old', drop, rules));
      await at(5, () => store.mutate(desktop, 'areas/old', put('second copy\n'), rules));
      await at(5, () => store.mutate(cli, 'areas/old', drop, rules));
      await at(6, () => store.mutate(desktop, 'areas/back', put('back\n'), rules));
      await at(7, () => store.mutate(cli, 'areas/back', drop, rules));
      // A revision with a note (a revert's), which a dump carries like the rest.
      await at(8, () => store.undrop(cli, 'areas/back', { ...rules, note: 'revert abc-12345678: a note' }));
      await at(9, () => store.mutate(desktop, 'topics/empty', put('gone\n', 'Emptied'), rules));
      await at(10, () => store.mutate(desktop, 'topics/empty', put('', 'Emptied'), rules));
      await store.tokens.add(token('t-alice', { created: START + 1_000, lastUsed: START + 9_000 }));
      await store.tokens.add(
        token('t-bob', { user: 'bob', label: 'bob "ro"', readOnly: true, created: START + 2_000 }),
      );
      await store.tokens.add(token('t-review', { label: 'reviewed', review: true, created: START + 3_000 }));
      for (const kept of PROPOSALS) await store.proposals.add(kept, 10, 0);
      for (const kept of ACCOUNTS) await store.accounts.put(kept);
      await store.accounts.addSession(session('s-alice'));
      for (const kept of CLIENTS) await store.oauth.saveClient(kept);
      const [first, second] = GRANTS;
      await store.oauth.saveGrant(first!, SECRETS.code);
      await store.oauth.saveGrant(second!, SECRETS.bobCode);
      await store.oauth.consume(SECRETS.code.hash, START + 20_000);
      await store.oauth.saveSecrets(first!.id, [SECRETS.access, SECRETS.refresh]);
    }

    /** Everything the other methods show about both users. */
    async function reads(store: StorageBackend) {
      const names = ['topics/editor', 'people/ada', 'areas/old', 'areas/back', 'topics/empty', 'topics/new'];
      const perUser = async (user: string) => ({
        index: await store.index(user),
        entries: (await store.get(user, names)).sort((a, b) => (a.name < b.name ? -1 : 1)),
        histories: await Promise.all(names.map((name) => store.history(user, name))),
        trash: await store.trash(user),
      });
      return {
        alice: await perUser('alice'),
        bob: await perUser('bob'),
        tokens: await store.tokens.list(),
        byHash: await store.tokens.findByHash(token('t-bob').hash),
        accounts: await store.accounts.list(),
        clients: await Promise.all(CLIENTS.map((kept) => store.oauth.findClient(kept.id))),
        clientCount: await store.oauth.countClients(),
        grants: await store.oauth.listGrants(),
        proposals: [await store.proposals.list('alice', 0), await store.proposals.list('bob', 0)],
        secrets: await Promise.all(Object.values(SECRETS).map((secret) => store.oauth.findSecret(secret.hash))),
      };
    }

    describe('isEmpty', () => {
      it('is true for a fresh store, whose dump holds nothing', async () => {
        const store = await fresh();

        expect(await store.isEmpty()).toBe(true);
        expect(await store.dump()).toEqual({ ...EMPTY, openedSince: expect.any(Number) });
      });

      it('is false once the store holds an entry, even only in the trash', async () => {
        const store = await fresh();
        await store.mutate(desktop, 'topics/a', put('a\n'), rules);
        await store.mutate(desktop, 'topics/a', drop, rules);

        expect(await store.isEmpty()).toBe(false);
      });

      it('is false once the store holds a token', async () => {
        const store = await fresh();
        await store.tokens.add(token('t1'));

        expect(await store.isEmpty()).toBe(false);
      });

      it('is false once the store holds only an account, only a client, or only a grant', async () => {
        const [withAccount, withClient, withGrant] = [await fresh(), await fresh(), await fresh()];
        await withAccount.accounts.put(account('alice'));
        await withClient.oauth.saveClient(client('c1'));
        // A grant is saved for an account holder only; the account then goes, the grant stays (as one from a load may).
        await withGrant.accounts.put(account('alice'));
        await withGrant.oauth.saveGrant(grant('g1'), grantSecret('c1', 'g1'));
        await withGrant.accounts.remove('alice');

        expect(await withAccount.isEmpty()).toBe(false);
        expect(await withClient.isEmpty()).toBe(false);
        expect(await withGrant.isEmpty()).toBe(false);
      });
    });

    describe('dump', () => {
      it('holds every entry of every user, live and dropped, each with every revision, the usage and the tokens', async () => {
        const store = await fresh();
        await fill(store);

        const dump = await store.dump();

        const ids = dump.entries.map((entry) => entry.id);
        expect(ids).toEqual([...ids].sort((a, b) => a - b));
        expect(new Set(ids).size).toBe(ids.length);
        expect(dump.entries.map((entry) => entry.opened)).toEqual(dump.entries.map(() => null));
        const strip = dump.entries.map(({ id, revisions, opened, ...entry }) => ({
          ...entry,
          revisions: revisions.map((r) => `${r.revision} ${r.operation} ${r.actor} ${r.at - START} ${r.description}`),
        }));
        expect(strip).toEqual([
          {
            user: 'alice',
            name: 'topics/editor',
            description: 'Editor, keyboard',
            body: 'Uses Helix.\nTabs, width 4.\n',
            size: 27,
            created: START + 1_000,
            updated: START + 2_000,
            revision: 2,
            droppedAt: null,
            droppedBy: null,
            revisions: [
              '1 create claude-desktop 1000 Editor, keyboard',
              '2 append claude-desktop 2000 Editor, keyboard',
            ],
          },
          {
            user: 'bob',
            name: 'people/ada',
            description: 'Ada, "the" {first}',
            body: AWKWARD,
            size: Buffer.byteLength(AWKWARD),
            created: START + 3_000,
            updated: START + 3_000,
            revision: 1,
            droppedAt: null,
            droppedBy: null,
            revisions: [`1 create ${bob.label} 3000 Ada, "the" {first}`],
          },
          {
            user: 'alice',
            name: 'areas/old',
            description: 'a description',
            body: 'first copy\n',
            size: 11,
            created: START + 4_000,
            updated: START + 4_000,
            revision: 2,
            droppedAt: START + 5_000,
            droppedBy: 'cli',
            revisions: ['1 create claude-desktop 4000 a description', '2 drop cli 5000 a description'],
          },
          {
            user: 'alice',
            name: 'areas/old',
            description: 'a description',
            body: 'second copy\n',
            size: 12,
            created: START + 5_000,
            updated: START + 5_000,
            revision: 2,
            droppedAt: START + 5_000,
            droppedBy: 'cli',
            revisions: ['1 create claude-desktop 5000 a description', '2 drop cli 5000 a description'],
          },
          {
            user: 'alice',
            name: 'areas/back',
            description: 'a description',
            body: 'back\n',
            size: 5,
            created: START + 6_000,
            updated: START + 6_000,
            revision: 3,
            droppedAt: null,
            droppedBy: null,
            revisions: [
              '1 create claude-desktop 6000 a description',
              '2 drop cli 7000 a description',
              '3 undrop cli 8000 a description',
            ],
          },
          {
            user: 'alice',
            name: 'topics/empty',
            description: 'Emptied',
            body: '',
            size: 0,
            created: START + 9_000,
            updated: START + 10_000,
            revision: 2,
            droppedAt: null,
            droppedBy: null,
            revisions: ['1 create claude-desktop 9000 Emptied', '2 replace claude-desktop 10000 Emptied'],
          },
        ]);
        expect(dump.entries[1]!.revisions[0]!.body).toBe(AWKWARD);
        expect(dump.users).toEqual([
          {
            user: 'alice',
            // The name, description and body of each live entry: topics/editor, areas/back, topics/empty.
            totalBytes: 13 + 16 + 27 + (10 + 13 + 5) + (12 + 7 + 0),
            entries: 3,
            // The description and body of every revision kept: topics/editor's two, areas/old's two
            // copies (create and drop each), areas/back's three, topics/empty's two.
            historyBytes: 16 + 12 + (16 + 27) + (13 + 11) * 2 + (13 + 12) * 2 + (13 + 5) * 3 + (7 + 5) + (7 + 0),
          },
          {
            user: 'bob',
            totalBytes: Buffer.byteLength('people/ada') + 18 + Buffer.byteLength(AWKWARD),
            entries: 1,
            historyBytes: 18 + Buffer.byteLength(AWKWARD),
          },
        ]);
        expect(dump.users).toEqual(recount(dump));
        expect(dump.tokens).toEqual([
          token('t-alice', { created: START + 1_000, lastUsed: START + 9_000 }),
          token('t-bob', { user: 'bob', label: 'bob "ro"', readOnly: true, created: START + 2_000 }),
          token('t-review', { label: 'reviewed', review: true, created: START + 3_000 }),
        ]);
      });

      it('holds every proposal, oldest first', async () => {
        const store = await fresh();
        await fill(store);

        expect((await store.dump()).proposals).toEqual(PROPOSALS);
      });

      it('holds every account, client, grant and secret in its order, and no session', async () => {
        const store = await fresh();
        await fill(store);

        const dump = await store.dump();

        expect(dump.accounts).toEqual([ACCOUNTS[1], ACCOUNTS[0]]);
        expect(dump.clients).toEqual([CLIENTS[1], CLIENTS[0]]);
        expect(dump.grants).toEqual([GRANTS[1], GRANTS[0]]);
        const { code, access, refresh, bobCode } = SECRETS;
        // By grant id (g-alice before g-bob), then hash.
        expect(dump.grantSecrets).toEqual([access, { ...code, used: START + 20_000 }, refresh, bobCode]);
        expect(JSON.stringify(dump)).not.toContain(session('s-alice').hash);
      });
    });

    describe('dumpInBatches, where the store has it', () => {
      it('hands over what dump holds: every entry once, with its revisions, then the rest', async (context) => {
        const store = await fresh();
        if (!store.dumpInBatches) return context.skip('this store dumps whole');
        await fill(store);
        // 2,400 rows of entries and revisions: more than one batch of PostgreSQL's (postgres/dump.ts, READ_BATCH).
        await store.load(manyEntries(800), { replace: true });
        await fill(store);

        const totals: number[] = [];
        const batches: DumpedEntry[][] = [];
        const tables = await store.dumpInBatches({
          total: (entries) => totals.push(entries),
          batch: async (entries) => {
            expect(totals).toHaveLength(1);
            batches.push([...entries]);
          },
        });

        const { entries, ...whole } = await store.dump();
        expect(tables).toEqual(whole);
        expect(batches.flat().sort((a, b) => a.id - b.id)).toEqual(entries);
        expect(totals).toEqual([entries.length]);
        expect(batches.every((batch) => batch.length > 0)).toBe(true);
      });

      it('hands over no batch for a store without entries', async (context) => {
        const store = await fresh();
        if (!store.dumpInBatches) return context.skip('this store dumps whole');
        const batches: unknown[] = [];

        const tables = await store.dumpInBatches({
          total: () => {},
          batch: async (entries) => void batches.push(entries),
        });

        expect(batches).toEqual([]);
        expect({ entries: [], ...tables }).toEqual(await store.dump());
      });
    });

    describe('loadInBatches (or, where the store has none, its batches gathered and loaded whole)', () => {
      it('writes a dump handed over in batches across every page edge, as load writes it whole', async () => {
        const source = await fresh();
        await fill(source);
        const whole = await source.dump();
        const many = manyEntries(2_345);
        // fill()'s entries after 2,345 more: batches of 1, 999, 1,000, 1, then 344 and the rest, across a
        // SQLite load's batch of 1,000 entries and PostgreSQL's of 500 rows, and a lone entry on each side.
        const offset = many.entries.at(-1)!.id;
        const dump: StoreDump = {
          ...whole,
          entries: [...many.entries, ...whole.entries.map((entry) => ({ ...entry, id: entry.id + offset }))],
        };
        const target = await fresh();
        const reported: [number, number][] = [];

        await loadInBatchesOf(target, inBatches(dump, [1, 999, 1_000, 1, 344]), {
          replace: false,
          onProgress: (written, total) => reported.push([written, total]),
        });

        expect(await target.dump()).toEqual(dump);
        expect(reported.at(-1)).toEqual([dump.entries.length, dump.entries.length]);
        expect(reported.map(([written]) => written)).toEqual(
          [...reported.map(([written]) => written)].sort((a, b) => a - b),
        );
        expect((await target.mutate(desktop, 'topics/next', put('next\n'), rules)).after?.revision).toBe(1);
        expect((await target.dump()).entries.at(-1)?.id).toBeGreaterThan(dump.entries.at(-1)!.id);
      });

      it('with replace, puts a dump in batches in place of everything, and an empty one empties the store', async () => {
        const source = await fresh();
        await fill(source);
        const dump = await source.dump();
        const target = await fresh();
        await target.mutate(bob, 'topics/mine', put('mine\n'), rules);
        await target.tokens.add(token('t-mine'));

        await loadInBatchesOf(target, inBatches(dump, [2]), { replace: true });
        expect(await target.dump()).toEqual(dump);

        await loadInBatchesOf(target, inBatches(EMPTY, [2]), { replace: true });
        expect(await target.isEmpty()).toBe(true);
      });

      it('refuses a store that is not empty with CONFLICT before taking a batch, changing nothing', async () => {
        const source = await fresh();
        await fill(source);
        const target = await fresh();
        await target.mutate(bob, 'topics/mine', put('mine\n'), rules);
        const before = await target.dump();
        const taken: unknown[] = [];
        const dumped = inBatches(await source.dump(), [2]);

        const attempt = loadInBatchesOf(
          target,
          (batches) => dumped({ ...batches, batch: async (entries) => void taken.push(entries) }),
          { replace: false },
        );

        await expect(attempt).rejects.toThrow(
          'the target store is not empty, so nothing was loaded: load with replace to overwrite everything in it, or load into an empty store.',
        );
        expect(taken).toEqual([]);
        expect(await target.dump()).toEqual(before);
      });

      it('leaves the store as it was when the dump fails after some batches were written', async () => {
        const target = await fresh();
        await fill(target);
        const before = await target.dump();
        const readsBefore = await reads(target);
        const refused = new Error('the source failed mid-copy');
        const written: number[] = [];

        const attempt = loadInBatchesOf(target, inBatches(manyEntries(2_345), [1_000], { after: 2, error: refused }), {
          replace: true,
          onProgress: (count) => written.push(count),
        });

        await expect(attempt).rejects.toBe(refused);
        // Written as they came, where the store loads in batches; else gathered, and none written.
        expect(written.at(-1)).toBe(target.loadInBatches ? 2_000 : undefined);
        expect(await target.dump()).toEqual(before);
        expect(await reads(target)).toEqual(readsBefore);
      });

      it('leaves the store as it was when the dump fails once every batch was written (a check at its end)', async () => {
        const target = await fresh();
        await fill(target);
        const before = await target.dump();
        const refused = new Error('a check at the end refused the copy');

        const attempt = loadInBatchesOf(target, inBatches(manyEntries(1_200), [500], { after: 3, error: refused }), {
          replace: true,
        });

        await expect(attempt).rejects.toBe(refused);
        expect(await target.dump()).toEqual(before);
      });

      it('leaves the store as it was when what follows the entries cannot be stored', async () => {
        const source = await fresh();
        await fill(source);
        const target = await fresh();
        await target.mutate(bob, 'topics/mine', put('mine\n'), rules);
        const before = await target.dump();
        const dump = await source.dump();
        const broken: StoreDump = { ...dump, tokens: [...dump.tokens, { ...token('t-alice'), hash: 'e'.repeat(64) }] };

        await expect(loadInBatchesOf(target, inBatches(broken, [1]), { replace: true })).rejects.toMatchObject({
          name: 'EngramError',
          code: 'CONFLICT',
        });

        expect(await target.dump()).toEqual(before);
      });
    });

    describe('load', () => {
      it('into an empty store gives a copy that dumps identically and answers every read the same', async () => {
        const source = await fresh();
        await fill(source);
        const dump = await source.dump();
        const target = await fresh();

        await target.load(dump, { replace: false });

        expect(await target.dump()).toEqual(dump);
        expect(await reads(target)).toEqual(await reads(source));
        expect(await target.isEmpty()).toBe(false);
        const back = dump.entries.find((entry) => entry.name === 'areas/back');
        expect(back?.revisions.at(-1)?.note).toBe('revert abc-12345678: a note');
      });

      it('leaves a copy that works on: revisions number on, new entries, undrop, purge and tokens', async () => {
        const source = await fresh();
        await fill(source);
        const target = await fresh();
        await target.load(await source.dump(), { replace: false });

        clock.time = START + 60_000;
        for (const store of [source, target]) {
          await store.mutate(desktop, 'topics/editor', appendLine('Font: Iosevka.'), rules);
          await store.mutate(desktop, 'topics/new', put('new\n'), rules);
          await store.undrop(cli, 'areas/old', rules);
          await store.purge('bob', 'people/ada', { includeLive: true });
          await store.tokens.touch('t-bob', START + 61_000);
          await store.tokens.revoke('t-alice');
        }

        expect(await reads(target)).toEqual(await reads(source));
        const [before, after] = [await source.dump(), await target.dump()];
        expect(after.users).toEqual(before.users);
        expect(after.entries.map(({ id, ...entry }) => entry)).toEqual(before.entries.map(({ id, ...entry }) => entry));
        expect(new Set(after.entries.map((entry) => entry.id)).size).toBe(after.entries.length);
      });

      it('refuses a store that holds only an account with CONFLICT, changing nothing', async () => {
        const source = await fresh();
        await fill(source);
        const target = await fresh();
        await target.accounts.put(account('carol'));
        const before = await target.dump();

        await expect(target.load(await source.dump(), { replace: false })).rejects.toMatchObject({
          name: 'EngramError',
          code: 'CONFLICT',
        });

        expect(await target.dump()).toEqual(before);
      });

      it('refuses a store that is not empty with CONFLICT, changing nothing', async () => {
        const source = await fresh();
        await fill(source);
        const target = await fresh();
        await target.mutate(bob, 'topics/mine', put('mine\n'), rules);
        await target.tokens.add(token('t-mine'));
        const before = await target.dump();

        const attempt = target.load(await source.dump(), { replace: false });

        await expect(attempt).rejects.toMatchObject({ name: 'EngramError', code: 'CONFLICT' });
        await expect(attempt).rejects.toThrow(
          'the target store is not empty, so nothing was loaded: load with replace to overwrite everything in it, or load into an empty store.',
        );
        expect(await target.dump()).toEqual(before);
      });

      it('with replace, puts the dump in place of everything the store held', async () => {
        const source = await fresh();
        await fill(source);
        const dump = await source.dump();
        const target = await fresh();
        await target.mutate(bob, 'topics/mine', put('mine\n'), rules);
        await target.mutate(bob, 'topics/mine', appendLine('more'), rules);
        await target.tokens.add(token('t-mine'));

        await target.accounts.put(account('carol'));
        await target.accounts.addSession(session('s-carol', { user: 'carol' }));
        await target.oauth.saveGrant(grant('g-carol', { user: 'carol' }), grantSecret('carol', 'g-carol'));

        await target.load(dump, { replace: true });

        expect(await target.dump()).toEqual(dump);
        expect(await target.history('bob', 'topics/mine')).toEqual([]);
        expect(await target.tokens.findByHash(token('t-mine').hash)).toBeUndefined();
        expect(await target.accounts.get('carol')).toBeUndefined();
        expect(await target.accounts.listSessions()).toEqual([]);
        expect(await target.oauth.findSecret(grantSecret('carol', 'g-carol').hash)).toBeUndefined();
      });

      it('with replace and an empty dump, empties the store', async () => {
        const target = await fresh();
        await fill(target);

        await target.load(EMPTY, { replace: true });

        expect(await target.isEmpty()).toBe(true);
        expect(await target.index('alice')).toEqual([]);
        expect(await target.trash('alice')).toEqual([]);
      });

      it('writes all or nothing: a dump that cannot be stored leaves the store as it was', async () => {
        const source = await fresh();
        await fill(source);
        const target = await fresh();
        await target.mutate(bob, 'topics/mine', put('mine\n'), rules);
        const before = await target.dump();
        const dump = await source.dump();
        const broken: StoreDump = { ...dump, tokens: [...dump.tokens, { ...token('t-alice'), hash: 'e'.repeat(64) }] };

        await expect(target.load(broken, { replace: true })).rejects.toMatchObject({
          name: 'EngramError',
          code: 'CONFLICT',
          message: "another token has the same id: each token's id and hash must be unique, so nothing was added.",
        });

        expect(await target.dump()).toEqual(before);
      });

      it('keeps when each entry was last opened, and since when openings are recorded', async () => {
        const source = await fresh();
        await fill(source);
        await source.recordOpened([{ user: 'alice', name: 'topics/editor', at: START + 50_000 }], 0);
        const dump = await source.dump();
        expect(dump.entries.find((entry) => entry.name === 'topics/editor')?.opened).toBe(START + 50_000);
        const target = await fresh();

        await target.load({ ...dump, openedSince: START - 1 }, { replace: false });

        const { entries, openedSince } = await target.overview('alice');
        expect(openedSince).toBe(START - 1);
        expect(entries.find((row) => row.name === 'topics/editor')?.opened).toBe(START + 50_000);
        expect(entries.filter((row) => row.opened !== undefined)).toHaveLength(1);
      });

      it('loads a dump of a store that records no openings: no entry opened, the target’s own start kept', async () => {
        const source = await fresh();
        await fill(source);
        const { openedSince: _, ...dump } = await source.dump();
        const older: StoreDump = { ...dump, entries: dump.entries.map(({ opened: _, ...entry }) => entry) };
        const target = await fresh();
        const { openedSince } = await target.overview('alice');

        await target.load(older, { replace: false });

        const overview = await target.overview('alice');
        expect(overview.openedSince).toBe(openedSince);
        expect(overview.entries.length).toBeGreaterThan(0);
        expect(overview.entries.every((row) => row.opened === undefined)).toBe(true);
      });

      it('loads thousands of entries with their own ids, reporting progress up to every entry written', async () => {
        const many = manyEntries(2_345);
        const target = await fresh();
        const reported: number[] = [];

        await target.load(many, { replace: false, onProgress: (written) => reported.push(written) });

        expect(await target.dump()).toEqual(many);
        expect(reported.at(-1)).toBe(many.entries.length);
        expect(reported).toEqual([...reported].sort((a, b) => a - b));
        expect((await target.mutate(desktop, 'topics/next', put('next\n'), rules)).after?.revision).toBe(1);
        expect((await target.dump()).entries.at(-1)?.id).toBeGreaterThan(many.entries.at(-1)!.id);
      });
    });
  });
}
