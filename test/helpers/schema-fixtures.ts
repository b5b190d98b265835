/**
 * The upgrade fixtures of test/fixtures/schemas (a database made by every schema version
 * Engram has had, by that version's own code, with a manifest of what that code read back:
 * scripts/make-schema-fixtures.mjs), and the check that today's code finds all of it, for
 * the upgrade tests and the tests of the copy kept before an upgrade.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { type App, createApp } from '../../src/app.js';
import { type Backend, openBackend } from '../../src/open-store.js';
import type { StorageBackend } from '../../src/storage/backend.js';

/** The fixtures' folder. */
export const FIXTURES = fileURLToPath(new URL('../fixtures/schemas/', import.meta.url));

/** What a fixture holds, as its own version's code read it back (write-data.mjs). */
export interface Manifest {
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

export function fixtures(backend: Manifest['backend']): { name: string; manifest: Manifest }[] {
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
export async function open(backend: Backend): Promise<{ app: App; store: StorageBackend }> {
  const store = await openBackend(backend);
  return { app: createApp({ store }), store };
}

export async function expectEverythingKept(
  opened: { app: App; store: StorageBackend },
  manifest: Manifest,
): Promise<void> {
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
