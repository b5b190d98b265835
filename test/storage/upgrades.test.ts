/**
 * Upgrades that cannot lose a memory: every fixture of test/fixtures/schemas (a database
 * made by each schema version main has had, by that version's own code; see
 * scripts/make-schema-fixtures.mjs) opened by today's code, which must find everything
 * the old code itself read back (the fixture's manifest): every entry with its body and
 * description byte for byte, every revision, the trash, every token (its secret still
 * signs in), every account (its password still signs in) and every connected app (its
 * OAuth tokens still work). Both backends; PostgreSQL through a database of its own per
 * fixture, skipped with a notice where no server is available.
 */

import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.js';
import { type Backend, openBackend } from '../../src/open-store.js';
import type { StorageBackend } from '../../src/storage/backend.js';

import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/storage/sqlite/migrations.js';
import { createTestDatabase, findTestPostgres, queryPostgres, type TestDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';

const server = await findTestPostgres();

const FIXTURES = fileURLToPath(new URL('../fixtures/schemas/', import.meta.url));

/** What a fixture holds, as its own version's code read it back (write-data.mjs). */
interface Manifest {
  readonly backend: 'sqlite' | 'postgres';
  readonly schemaVersion: number;
  readonly madeBy: { readonly commit: string; readonly date: string };
  readonly users: Record<
    string,
    {
      readonly index: readonly Record<string, unknown>[];
      readonly entries: readonly {
        readonly name: string;
        readonly description: string;
        readonly body: string;
        readonly size: number;
        readonly revision: number;
        readonly revisions?: readonly Record<string, unknown>[];
      }[];
      readonly trash?: readonly Record<string, unknown>[];
    }
  >;
  readonly tokens?: readonly (Record<string, unknown> & { id: string; user: string; secret: string })[];
  readonly accounts?: readonly (Record<string, unknown> & { user: string; password?: string })[];
  readonly apps?: readonly (Record<string, unknown> & {
    user: string;
    clientId: string;
    scopes: readonly string[];
    accessToken: string;
    refreshToken: string;
    resource: string;
  })[];
}

function fixtures(backend: Manifest['backend']): { name: string; manifest: Manifest }[] {
  return readdirSync(FIXTURES)
    .filter((file) => file.startsWith(`${backend}-`) && file.endsWith('.json'))
    .map((file) => ({
      name: file.slice(0, -'.json'.length),
      manifest: JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as Manifest,
    }))
    .sort((a, b) => a.manifest.schemaVersion - b.manifest.schemaVersion);
}

/** `actual` cut down to the fields `expected` has: what the old code saw is what is compared. */
function sameFields(actual: object, expected: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(expected).map((key) => [key, (actual as Record<string, unknown>)[key]]));
}

/** The fields of every item of `expected`, from the items of `actual` in the same order. */
function listed(actual: readonly object[], expected: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return actual.map((item, at) => sameFields(item, expected[at] ?? {}));
}

/** Everything the manifest says the database held, found again through today's code. */
/** Today's services over the store at `backend`, migrated on opening as `engram` does. */
async function open(backend: Backend): Promise<{ app: App; store: StorageBackend }> {
  const store = await openBackend(backend);
  return { app: createApp({ store }), store };
}

async function expectEverythingKept(opened: { app: App; store: StorageBackend }, manifest: Manifest): Promise<void> {
  const { app, store: backend } = opened;
  const store = manifest.backend;
  for (const [user, held] of Object.entries(manifest.users)) {
    const caller = { user, label: 'upgrade-test' };
    expect(listed(await app.memory.index(caller), held.index), `${store} ${user}: index`).toEqual(held.index);

    const entries = await backend.get(
      user,
      held.entries.map((entry) => entry.name),
    );
    expect(
      entries.map((entry) => ({
        name: entry.name,
        description: entry.description,
        body: entry.body,
        size: entry.size,
        revision: entry.revision,
      })),
      `${store} ${user}: entries`,
    ).toEqual(held.entries.map(({ revisions: _, ...entry }) => entry));

    for (const entry of held.entries) {
      const history = await backend.history(user, entry.name);
      if (entry.revisions) {
        expect(listed(history, entry.revisions), `${user} ${entry.name}: revisions`).toEqual(entry.revisions);
      } else {
        // The oldest version could not list revisions; it kept one per change all the same.
        expect(history.map((revision) => revision.revision)).toEqual(
          Array.from({ length: entry.revision }, (_, at) => at + 1),
        );
        expect(history.at(-1)).toMatchObject({ description: entry.description, body: entry.body });
      }
    }

    if (held.trash) {
      expect(listed(await backend.trash(user), held.trash), `${user}: trash`).toEqual(held.trash);
    }
  }

  if (manifest.tokens) {
    const tokens = manifest.tokens.map(({ secret: _, ...token }) => token);
    expect(listed(await app.access.list(), tokens)).toEqual(tokens);
    for (const token of manifest.tokens) {
      expect(await app.access.authenticate(token.secret)).toMatchObject({
        user: token.user,
        label: token.label,
        readOnly: token.readOnly,
      });
    }
  }

  if (manifest.accounts) {
    const accounts = manifest.accounts.map(({ password: _, ...account }) => account);
    expect(listed(await app.accounts.list(), accounts)).toEqual(accounts);
    for (const account of manifest.accounts) {
      if (account.password === undefined) continue;
      expect(await app.accounts.signIn(account.user, account.password, '127.0.0.1')).toEqual(expect.any(String));
    }
  }

  if (manifest.apps) {
    const apps = manifest.apps.map(({ accessToken: _a, refreshToken: _r, resource: _s, ...app }) => app);
    expect(listed(await app.oauth.tokens.listApps(), apps)).toEqual(apps);
    for (const granted of manifest.apps) {
      expect(await app.oauth.tokens.authenticate(granted.accessToken, granted.resource)).toMatchObject({
        user: granted.user,
        readOnly: !granted.scopes.includes('memory:write'),
      });
      const refreshed = await app.oauth.tokens.refresh({
        refreshToken: granted.refreshToken,
        clientId: granted.clientId,
      });
      expect(refreshed.scope.split(' ').sort()).toEqual([...granted.scopes].sort());
    }
  }

  // The search index is whole after the upgrade: a word of a body finds its entry.
  expect((await app.memory.search({ user: 'alice', label: 'upgrade-test' }, 'cortado')).map((hit) => hit.name)).toEqual(
    ['topics/coffee'],
  );
}

describe('an upgrade to this Engram keeps everything', () => {
  let opened: { app: App; store: StorageBackend } | undefined;
  afterEach(async () => {
    await opened?.app.close();
    opened = undefined;
  });

  describe('SQLite', () => {
    const all = fixtures('sqlite');

    it('has a fixture of every version up to this one but 2, which no commit ever had as its newest', () => {
      const versions = all.map(({ manifest }) => manifest.schemaVersion);
      expect(versions).toEqual(
        Array.from({ length: SQLITE_MIGRATIONS.length }, (_, at) => at + 1).filter((version) => version !== 2),
      );
    });

    it.each(all)('$name, made by the Engram of its day', async ({ name, manifest }) => {
      const path = tempDir().file('memory.db');
      copyFileSync(join(FIXTURES, `${name}.db`), path);

      opened = await open({ kind: 'sqlite', path });

      await expectEverythingKept(opened, manifest);
      const db = new Database(path, { readonly: true });
      try {
        expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: SQLITE_MIGRATIONS.length }]);
        expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
        expect(db.pragma('foreign_key_check')).toEqual([]);
      } finally {
        db.close();
      }
    });
  });

  describe.skipIf(!server)('PostgreSQL', () => {
    const all = fixtures('postgres');
    let database: TestDatabase | undefined;
    afterEach(async () => {
      await opened?.app.close();
      opened = undefined;
      await database?.drop();
      database = undefined;
    });

    it('has a fixture of every version up to this one but 4, which no commit ever had as its newest', () => {
      const versions = all.map(({ manifest }) => manifest.schemaVersion);
      expect(versions).toEqual(
        Array.from({ length: POSTGRES_MIGRATIONS.length }, (_, at) => at + 1).filter((version) => version !== 4),
      );
    });

    it.each(all)('$name, made by the Engram of its day', async ({ name, manifest }) => {
      database = await createTestDatabase(server!);
      await queryPostgres(database.url, readFileSync(join(FIXTURES, `${name}.sql`), 'utf8'));

      opened = await open({ kind: 'postgres', url: database.url });

      await expectEverythingKept(opened, manifest);
      expect(await queryPostgres(database.url, 'SELECT version FROM schema_version')).toEqual([
        { version: POSTGRES_MIGRATIONS.length },
      ]);
    });
  });
});
