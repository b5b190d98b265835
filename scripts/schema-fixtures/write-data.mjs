/**
 * Run by make-schema-fixtures.mjs inside the build of an earlier commit: writes the fixed
 * data set of the upgrade fixtures through that commit's own API (its Memory, recovery,
 * token, account and OAuth services, each where that commit had it), then reads back what
 * it holds, as that code sees it, into the fixture's manifest. Nothing here knows today's
 * code: what an earlier build lacks (no undrop before recovery existed, no accounts before
 * their tables) is left out of the data and of the manifest alike.
 *
 *   node write-data.mjs <build folder> sqlite <file.db> <manifest.json>
 *   node write-data.mjs <build folder> postgres <connection URL> <manifest.json>
 */

import { createHash, randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [folder, backend, target, manifestPath] = process.argv.slice(2);
if (!folder || !['sqlite', 'postgres'].includes(backend) || !target || !manifestPath) {
  console.error('usage: node write-data.mjs <build folder> sqlite|postgres <file or URL> <manifest.json>');
  process.exit(2);
}

const dist = join(folder, 'dist');

/** The first of `paths` (under dist/) that this build has, imported; undefined when none. */
async function load(...paths) {
  for (const path of paths) {
    const file = join(dist, path);
    if (existsSync(file)) return import(pathToFileURL(file).href);
  }
  return undefined;
}

// One hundred years: the fixtures' OAuth tokens must still be good when a test runs them.
const LONG = 100 * 365 * 24 * 3600 * 1000;
const ISSUER = 'http://127.0.0.1:8787';
const RESOURCE = `${ISSUER}/mcp`;

const lib = await load('index.js');
const store =
  backend === 'sqlite'
    ? await lib.openSqliteStore({ path: target })
    : await lib.openPostgresStore({ connectionString: target });
const memory = lib.createMemory({ store });
const recovery = memory.recovery;

const as = (user, label) => ({ user, label });
const alice = as('alice', 'claude-desktop');
const aliceCli = as('alice', 'cli');
const bob = as('bob', 'chatgpt');
const carol = as('carol', 'agent');

const write = (caller, request) => memory.write(caller, request);

// alice: an entry edited every way the write tool edits (create, append, replace, remove).
await write(alice, {
  name: 'topics/coffee',
  description: 'How Alice takes her coffee ☕',
  new: 'Flat white, oat milk.\nNo sugar — never.\n',
});
await write(alice, { name: 'topics/coffee', new: 'Weekends: a cortado in Lyon, « café serré ».' });
await write(aliceCli, { name: 'topics/coffee', old: 'oat milk', new: 'whole milk' });
await write(alice, { name: 'topics/coffee', old: 'No sugar — never.\n' });

// Unicode in every field a person writes: accents, CJK, emoji, right-to-left text.
await write(alice, {
  name: 'people/zoe-muller',
  description: 'Zoë Müller, violinist 🎻, colleague in Zürich',
  new: 'Plays in the Tonhalle orchestra.\n日本語を勉強している。\nSays “grüezi”, writes שלום to her cousin.\n\nTabs\tkept.',
});
await write(aliceCli, {
  name: 'people/zoe-muller',
  description: 'Zoë Müller, violinist 🎻, friend in Zürich',
  new: 'Birthday: 14 March (🎂).',
});

// Dropped, and in the trash.
await write(alice, { name: 'areas/old-project', description: 'A project Alice gave up', new: 'Step one.' });
await write(alice, { name: 'areas/old-project', new: 'Step two, never done.' });
await memory.drop(alice, 'areas/old-project');

// Dropped then written again under the same name: one live copy, one in the trash.
await write(alice, { name: 'topics/reused-name', description: 'First life', new: 'The first body.' });
await memory.drop(aliceCli, 'topics/reused-name');
await write(alice, { name: 'topics/reused-name', description: 'Second life', new: 'The second body,\non two lines.' });

// Dropped and brought back (where this build can undrop), then written again.
await write(alice, { name: 'areas/garden', description: 'The allotment 🌱', new: 'Tomatoes, basil.' });
await memory.drop(alice, 'areas/garden');
if (recovery?.undrop) await recovery.undrop(aliceCli, 'areas/garden');
else await write(alice, { name: 'areas/garden', description: 'The allotment 🌱', new: 'Tomatoes, basil.' });
await write(alice, { name: 'areas/garden', new: 'Courgettes in August.' });

// bob: another user with names alice also uses, so nothing may leak between users.
await write(bob, {
  name: 'topics/coffee',
  description: 'Bob drinks tea, not coffee',
  new: 'Earl Grey.\n\n\nThree blank lines above, trailing spaces here:   ',
});
await write(bob, {
  name: 'areas/thesis',
  description: 'PhD thesis on Σ-protocols',
  new: 'Chapter 1: draft.\nChapter 2: todo.',
});
await write(bob, { name: 'areas/thesis', old: 'Chapter 2: todo.', new: 'Chapter 2: in review ✓' });
await write(bob, { name: 'areas/thesis', new: 'Chapter 3: 草稿.' });

// carol: one entry, and the rest of her memory dropped.
await write(carol, { name: 'topics/hello', description: 'One line', new: 'Hello, world.' });
await write(carol, { name: 'topics/gone', description: 'Forgotten soon', new: 'To be dropped.' });
await memory.drop(carol, 'topics/gone');

const secrets = { tokens: {}, passwords: {}, apps: {} };

// Static bearer tokens (engram token create), where this build has them.
const accessModule = await load('core/access.js', 'access/tokens/access.js');
const access = accessModule && store.tokens ? accessModule.createAccess(store.tokens) : undefined;
if (access) {
  for (const [user, label, readOnly] of [
    ['alice', 'laptop ✓', false],
    ['bob', 'phone', true],
    ['carol', 'ci', false],
  ]) {
    const issued = await access.create({ user, label, readOnly });
    secrets.tokens[issued.info.id] = issued.token;
  }
}

// Accounts with passwords (engram user add), where this build keeps them in the database.
const accountsModule = await load('core/accounts.js', 'access/accounts/accounts.js');
const accounts = accountsModule && store.accounts ? accountsModule.createAccounts(store) : undefined;
const PASSWORDS = { alice: 'correct horse battery staple', bob: 'Пароль-с-юникодом-42' };
if (accounts) {
  await accounts.create('alice', PASSWORDS.alice);
  await accounts.create('bob', PASSWORDS.bob);
  await accounts.create('carol');
  secrets.passwords = PASSWORDS;
}

// OAuth: two registered clients, a grant each, through the consent flow and the code exchange.
const grantStore = store.grants ?? store.oauth;
const clientsModule = await load('core/oauth/clients.js', 'access/oauth/clients.js');
const authorizationModule = await load('core/oauth/authorization.js', 'access/oauth/authorization.js');
const tokensModule = await load('core/oauth/tokens.js', 'access/oauth/tokens.js');
let oauthTokens;
if (grantStore && clientsModule && authorizationModule && tokensModule) {
  const clients = new clientsModule.OAuthClients(grantStore);
  const authorization = new authorizationModule.Authorization(grantStore, clients, {
    issuer: ISSUER,
    resource: RESOURCE,
    codeTtlMs: LONG,
  });
  oauthTokens = new tokensModule.OAuthTokens(grantStore, {
    ttls: { access: LONG, refresh: LONG },
    isKnownClient: () => true,
  });
  for (const [user, clientName, redirectUri, scope, readOnly] of [
    ['alice', 'Claude', 'https://claude.ai/api/mcp/auth_callback', 'memory:read memory:write', false],
    ['bob', 'Local tool ✓', 'http://127.0.0.1:33418/callback', 'memory:read memory:write', true],
  ]) {
    const registration = await clients.register({
      client_name: clientName,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const verifier = randomBytes(32).toString('base64url');
    const check = await authorization.check({
      client_id: registration.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      scope,
      state: 'fixture',
      resource: RESOURCE,
    });
    if (check.kind !== 'ok') throw new Error(`the authorization request was refused: ${JSON.stringify(check)}`);
    const redirect = new URL(await authorization.approve(check.request, user, readOnly));
    const code = redirect.searchParams.get('code');
    const tokens = await oauthTokens.exchangeCode({
      code,
      codeVerifier: verifier,
      redirectUri,
      clientId: registration.client_id,
      resource: RESOURCE,
    });
    secrets.apps[registration.client_id] = {
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token,
      resource: RESOURCE,
    };
  }
}

// What this build holds, read back through its own API.
const plain = (value) => JSON.parse(JSON.stringify(value));
const manifest = { backend, users: {} };
for (const user of ['alice', 'bob', 'carol']) {
  const index = await memory.index(as(user, 'agent'));
  const names = index.map((row) => row.name);
  const stored = await store.get(user, names);
  const entries = [];
  for (const entry of stored) {
    const item = {
      name: entry.name,
      description: entry.description,
      body: entry.body,
      size: entry.size,
      revision: entry.revision,
    };
    if (store.history) item.revisions = plain(await store.history(user, entry.name));
    entries.push(item);
  }
  const record = { index: plain(index), entries };
  if (store.trash) record.trash = plain(await store.trash(user));
  manifest.users[user] = record;
}
if (access) {
  manifest.tokens = (await access.list()).map((token) => ({ ...plain(token), secret: secrets.tokens[token.id] }));
}
if (accounts) {
  manifest.accounts = (await accounts.list()).map((account) => ({
    ...plain(account),
    password: secrets.passwords[account.user],
  }));
}
if (oauthTokens) {
  manifest.apps = (await oauthTokens.listApps()).map((app) => ({ ...plain(app), ...secrets.apps[app.clientId] }));
}
await store.close();
writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
