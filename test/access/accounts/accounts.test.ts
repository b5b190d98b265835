/**
 * The Accounts service over the in-process store: adding accounts and setting passwords
 * (names normalised, bad names, short passwords and duplicates refused, changing
 * nothing); listing every user the store knows; removing a user (sessions, tokens and
 * apps ended, memory kept, or erased for good with purge); signing in (one answer for
 * every failure, slowed down per user and per address, logged without the password);
 * and browser sessions (hashed, fixed lifetime, touched at most once a minute).
 */

import { createHash } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { type AccountsOptions, createAccounts } from '../../../src/access/accounts/accounts.js';
import type { GrantRecord } from '../../../src/access/oauth/port.js';
import { createAccess } from '../../../src/access/tokens/access.js';
import { type Caller, createMemory } from '../../../src/memory/memory.js';
import { EngramError } from '../../../src/memory/model/errors.js';
import { openMemoryStore } from '../../../src/storage/memory/index.js';
import { TEST_PASSWORD_COST } from '../../helpers/password-cost.js';
import { expectEngramError } from '../../memory/fixtures.js';

const PASSWORD = 'correct horse battery staple';
const OTHER_PASSWORD = 'another long passphrase';
const START = 1_700_000_000_000;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const WRONG = 'wrong user name or password';

function setup(options: AccountsOptions = {}) {
  let clock = START;
  const now = () => clock;
  const store = openMemoryStore();
  const lines: string[] = [];
  const accounts = createAccounts(store, {
    now,
    log: (line) => lines.push(line),
    passwordCost: TEST_PASSWORD_COST,
    ...options,
  });
  const memory = createMemory({ store, proposals: store.proposals, now });
  const access = createAccess(store.tokens, { now });
  return {
    store,
    accounts,
    memory,
    access,
    lines,
    advance: (ms: number) => {
      clock += ms;
    },
    now,
  };
}

type Setup = ReturnType<typeof setup>;

function caller(user: string): Caller {
  return { user, label: 'test' };
}

async function writeEntries(memory: Setup['memory'], user: string, names: readonly string[]): Promise<void> {
  for (const name of names) await memory.write(caller(user), { name, description: `about ${name}`, new: 'text\n' });
}

/**
 * A grant of `user`'s, as the consent step saves it. A user without an account is given
 * one for the saving (the store keeps grants of account holders only) and loses it right
 * after, as a user whose grant predates the accounts, or came in a load, has none.
 */
async function addGrant(store: Setup['store'], id: string, user: string): Promise<void> {
  const hadAccount = (await store.accounts.get(user)) !== undefined;
  if (!hadAccount) await store.accounts.put({ user, passwordHash: undefined, created: START, updated: START });
  const grant: GrantRecord = {
    id,
    user,
    clientId: 'client',
    clientName: 'ChatGPT',
    readOnly: false,
    resource: 'https://engram.example/mcp',
    created: START,
    lastUsed: undefined,
    review: false,
  };
  await store.oauth.saveGrant(grant, {
    hash: createHash('sha256').update(id).digest('hex'),
    grantId: id,
    kind: 'code',
    created: START,
    expires: START + MINUTE,
    used: undefined,
    data: '',
  });
  if (!hadAccount) await store.accounts.remove(user);
}

/** Expects a sign-in to be refused as every failed one is: UNAUTHORIZED, the same words. */
async function expectWrong(accounts: Setup['accounts'], user: string, password: string, from = '192.0.2.1') {
  await expectEngramError(() => accounts.signIn(user, password, from), 'UNAUTHORIZED', WRONG);
}

/** Expects a sign-in to be refused for a while, with the seconds to wait in its detail. */
async function expectThrottled(accounts: Setup['accounts'], user: string, from: string, seconds: number) {
  const error = await expectEngramError(() => accounts.signIn(user, PASSWORD, from), 'TOO_MANY_ATTEMPTS');
  expect(error.detail).toEqual({ reason: 'sign-in-throttled', retryAfterSeconds: seconds });
  expect(error.message).toBe(
    `too many failed sign-ins lately; try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
  );
}

describe('create', () => {
  it('adds an account under the normalised name, keeping only an scrypt hash of the password', async () => {
    // Production's scrypt parameters, not TEST_PASSWORD_COST: the hash this test checks is the one a real account keeps.
    const { store, accounts } = setup({ passwordCost: undefined });
    await accounts.create('  Alice ', PASSWORD);
    const account = await store.accounts.get('alice');
    expect(account).toEqual({
      user: 'alice',
      passwordHash: expect.stringMatching(/^scrypt\$N=32768,r=8,p=1\$/),
      created: START,
      updated: START,
    });
    expect(JSON.stringify(await store.accounts.list())).not.toContain(PASSWORD);
    expect(await accounts.signIn('alice', PASSWORD, '192.0.2.1')).toBe('alice');
  });

  it('adds an account without a password, which nobody can sign in to until one is set', async () => {
    const { store, accounts, lines } = setup();
    await accounts.create('bob');
    expect(await store.accounts.get('bob')).toMatchObject({ user: 'bob', passwordHash: undefined });
    await expectWrong(accounts, 'bob', PASSWORD);
    expect(lines).toEqual(['sign-in failed for user "bob" from "192.0.2.1": no password set']);
  });

  it('refuses a bad user name, saying what a name must be, and adds nothing', async () => {
    const { store, accounts } = setup();
    for (const name of ['', '   ', 'alice smith', 'a\tb', 'x'.repeat(65)]) {
      await expectEngramError(
        () => accounts.create(name, PASSWORD),
        'INVALID_ARGUMENT',
        `${JSON.stringify(name)} is not a valid user name: use 1-64 characters without spaces, for example alice.`,
      );
    }
    expect(await store.accounts.list()).toEqual([]);
  });

  it('refuses a short password, never repeating it, and adds nothing', async () => {
    const { store, accounts } = setup();
    const error = await expectEngramError(
      () => accounts.create('alice', 'short pw'),
      'INVALID_ARGUMENT',
      /^the password must be at least 10 characters long; this one has 8\./,
    );
    expect(error.message).not.toContain('short pw');
    expect(await store.accounts.list()).toEqual([]);
  });

  it('refuses an account that exists, with the user in its detail, keeping the password it has', async () => {
    const { accounts } = setup();
    await accounts.create('alice', PASSWORD);
    const error = await expectEngramError(
      () => accounts.create('ALICE', OTHER_PASSWORD),
      'CONFLICT',
      'user alice already has an account; set a new password for it instead.',
    );
    expect(error.detail).toEqual({ reason: 'account-exists', user: 'alice' });
    expect(await accounts.signIn('alice', PASSWORD, '192.0.2.1')).toBe('alice');
    await expectWrong(accounts, 'alice', OTHER_PASSWORD);
  });
});

describe('setPassword', () => {
  it('replaces the password, keeps when the account was created, and signs every browser out', async () => {
    const { store, accounts, advance } = setup();
    await accounts.create('alice', PASSWORD);
    const { secret } = await accounts.openSession('alice', 'Firefox');
    advance(MINUTE);
    await accounts.setPassword('Alice', OTHER_PASSWORD);
    expect(await store.accounts.get('alice')).toMatchObject({ created: START, updated: START + MINUTE });
    expect(await accounts.sessionUser(secret)).toBeUndefined();
    expect(await accounts.signIn('alice', OTHER_PASSWORD, '192.0.2.1')).toBe('alice');
    await expectWrong(accounts, 'alice', PASSWORD);
  });

  it('adds the account of a user who has memory, a token or an app but no account yet', async () => {
    const { store, accounts, memory, access } = setup();
    await writeEntries(memory, 'bob', ['topics/a']);
    await access.create({ user: 'carol' });
    await addGrant(store, 'g1', 'dave');
    for (const user of ['bob', 'carol', 'dave']) {
      await accounts.setPassword(user, PASSWORD);
      expect(await accounts.signIn(user, PASSWORD, '192.0.2.1')).toBe(user);
    }
  });

  it('refuses a user the store knows nothing of, with the user in its detail, and adds nothing', async () => {
    const { store, accounts } = setup();
    const error = await expectEngramError(
      () => accounts.setPassword('nobody', PASSWORD),
      'NOT_FOUND',
      'there is no user nobody: no account, memory, token or connected app belongs to that name.',
    );
    expect(error.detail).toEqual({ reason: 'user-not-found', user: 'nobody' });
    expect(await store.accounts.list()).toEqual([]);
  });

  it('refuses a short password or a bad name, keeping the password it has', async () => {
    const { accounts } = setup();
    await accounts.create('alice', PASSWORD);
    await expectEngramError(() => accounts.setPassword('alice', '123456789'), 'INVALID_ARGUMENT', /at least 10/);
    await expectEngramError(
      () => accounts.setPassword('al ice', OTHER_PASSWORD),
      'INVALID_ARGUMENT',
      /valid user name/,
    );
    expect(await accounts.signIn('alice', PASSWORD, '192.0.2.1')).toBe('alice');
  });
});

describe('list', () => {
  it('lists every user with an account, memory, tokens or apps, by name, with what each has', async () => {
    const { store, accounts, memory, access } = setup();
    await accounts.create('alice', PASSWORD);
    await writeEntries(memory, 'alice', ['topics/a', 'topics/b']);
    await access.create({ user: 'alice' });
    await addGrant(store, 'g1', 'alice');
    await addGrant(store, 'g2', 'alice');
    await writeEntries(memory, 'bob', ['topics/gone']);
    await memory.drop(caller('bob'), 'topics/gone');
    await access.create({ user: 'carol', readOnly: true });
    await access.create({ user: 'carol' });
    await addGrant(store, 'g3', 'dave');
    await accounts.create('erin');

    const bytes = (await store.usage('alice')).totalBytes;
    expect(bytes).toBeGreaterThan(0);
    expect(await accounts.list()).toEqual([
      { user: 'alice', hasPassword: true, entries: 2, bytes, apps: 2, tokens: 1 },
      { user: 'bob', hasPassword: false, entries: 0, bytes: 0, apps: 0, tokens: 0 },
      { user: 'carol', hasPassword: false, entries: 0, bytes: 0, apps: 0, tokens: 2 },
      { user: 'dave', hasPassword: false, entries: 0, bytes: 0, apps: 1, tokens: 0 },
      { user: 'erin', hasPassword: false, entries: 0, bytes: 0, apps: 0, tokens: 0 },
    ]);
  });

  it('is empty for an empty store', async () => {
    expect(await setup().accounts.list()).toEqual([]);
  });
});

describe('remove', () => {
  async function aliceWithEverything(s: Setup) {
    await s.accounts.create('alice', PASSWORD);
    const first = await s.accounts.openSession('alice', 'Firefox');
    const second = await s.accounts.openSession('alice', 'Chromium');
    await s.accounts.create('bob', PASSWORD);
    const bobs = await s.accounts.openSession('bob', 'Safari');
    const aliceToken = await s.access.create({ user: 'alice' });
    await s.access.create({ user: 'alice', readOnly: true });
    const bobToken = await s.access.create({ user: 'bob' });
    await addGrant(s.store, 'g1', 'alice');
    await addGrant(s.store, 'g2', 'bob');
    await writeEntries(s.memory, 'alice', ['topics/kept', 'topics/edited', 'topics/dropped']);
    await s.memory.write(caller('alice'), { name: 'topics/edited', new: 'a secret line\n' });
    await s.memory.drop(caller('alice'), 'topics/dropped');
    await writeEntries(s.memory, 'bob', ['topics/bob']);
    return { sessions: [first.secret, second.secret], bobs: bobs.secret, aliceToken, bobToken };
  }

  it('signs the user out everywhere, revokes their tokens and apps, removes the account, and keeps the memory', async () => {
    const s = setup();
    const { sessions, bobs, aliceToken, bobToken } = await aliceWithEverything(s);
    const indexBefore = await s.store.index('alice');
    const trashBefore = await s.store.trash('alice');

    expect(await s.accounts.remove('Alice', { purge: false })).toEqual({ sessions: 2, tokens: 2, apps: 1, entries: 0 });

    expect(await s.store.accounts.get('alice')).toBeUndefined();
    for (const secret of sessions) expect(await s.accounts.sessionUser(secret)).toBeUndefined();
    await expectEngramError(() => s.access.authenticate(aliceToken.token), 'UNAUTHORIZED');
    expect((await s.store.oauth.listGrants()).map((grant) => grant.id)).toEqual(['g2']);
    await expectWrong(s.accounts, 'alice', PASSWORD);
    expect(await s.store.index('alice')).toEqual(indexBefore);
    expect(await s.store.trash('alice')).toEqual(trashBefore);
    expect((await s.store.history('alice', 'topics/edited')).length).toBe(2);
    // Still listed, for the memory they keep.
    expect((await s.accounts.list()).map((summary) => [summary.user, summary.entries])).toEqual([
      ['alice', 2],
      ['bob', 1],
    ]);
    // Bob keeps everything.
    expect(await s.accounts.sessionUser(bobs)).toBe('bob');
    expect((await s.access.authenticate(bobToken.token)).user).toBe('bob');
    expect(await s.store.index('bob')).toHaveLength(1);
  });

  it('with purge, erases the memory for good: entries, history, trash and changes waiting for review, and nothing of anyone else', async () => {
    const s = setup();
    await aliceWithEverything(s);
    const proposer = { user: 'alice', label: 'Claude', review: true };
    await s.memory.write(proposer, { name: 'topics/kept', new: 'a proposed secret' });
    const bobs = await s.memory.write(
      { user: 'bob', label: 'Claude', review: true },
      { name: 'topics/b', description: 'B', new: 'x' },
    );

    expect(await s.accounts.remove('alice', { purge: true })).toEqual({ sessions: 2, tokens: 2, apps: 1, entries: 3 });

    expect(await s.store.index('alice')).toEqual([]);
    expect(await s.store.trash('alice')).toEqual([]);
    for (const name of ['topics/kept', 'topics/edited', 'topics/dropped']) {
      expect(await s.store.history('alice', name)).toEqual([]);
    }
    const dump = await s.store.dump();
    expect(dump.entries.map((entry) => entry.user)).toEqual(['bob']);
    expect(JSON.stringify(dump)).not.toContain('a secret line');
    expect(JSON.stringify(dump)).not.toContain('a proposed secret');
    expect(dump.proposals).toEqual([bobs.proposal]);
    expect((await s.store.users()).map((usage) => usage.user)).toEqual(['bob']);
    expect((await s.accounts.list()).map((summary) => summary.user)).toEqual(['bob']);
  });

  it('removes a user who has memory only, and with purge erases it', async () => {
    const s = setup();
    await writeEntries(s.memory, 'carol', ['topics/a']);
    expect(await s.accounts.remove('carol', { purge: false })).toEqual({ sessions: 0, tokens: 0, apps: 0, entries: 0 });
    expect(await s.store.index('carol')).toHaveLength(1);
    expect(await s.accounts.remove('carol', { purge: true })).toEqual({ sessions: 0, tokens: 0, apps: 0, entries: 1 });
    expect(await s.accounts.list()).toEqual([]);
  });

  it("revokes the user's tokens in one step of the token port, reading no other user's", async () => {
    const s = setup();
    await aliceWithEverything(s);
    const listed: (string | undefined)[] = [];
    const list = s.store.tokens.list.bind(s.store.tokens);
    vi.spyOn(s.store.tokens, 'list').mockImplementation((user) => {
      listed.push(user);
      return list(user);
    });
    const revoke = vi.spyOn(s.store.tokens, 'revoke');

    expect(await s.accounts.remove('alice', { purge: false })).toMatchObject({ tokens: 2 });

    expect(listed).not.toContain(undefined);
    expect(revoke).not.toHaveBeenCalled();
    expect((await s.store.tokens.list()).map((token) => token.user)).toEqual(['bob']);
  });

  it('cut short by a failing store, leaves the user less access, never more, and removing again finishes', async () => {
    const s = setup();
    const { sessions, aliceToken } = await aliceWithEverything(s);
    vi.spyOn(s.store.oauth, 'revokeByUser').mockRejectedValueOnce(new Error('database went away'));

    await expect(s.accounts.remove('alice', { purge: false })).rejects.toThrow('database went away');

    expect(await s.store.accounts.get('alice')).toBeUndefined();
    for (const secret of sessions) expect(await s.accounts.sessionUser(secret)).toBeUndefined();
    await expectEngramError(() => s.access.authenticate(aliceToken.token), 'UNAUTHORIZED');
    expect(await s.accounts.remove('alice', { purge: false })).toEqual({ sessions: 0, tokens: 0, apps: 1, entries: 0 });
    expect((await s.store.oauth.listGrants()).map((grant) => grant.id)).toEqual(['g2']);
  });

  it('refuses a user the store knows nothing of, or a bad name, changing nothing', async () => {
    const s = setup();
    await aliceWithEverything(s);
    const before = await s.store.dump();
    const error = await expectEngramError(
      () => s.accounts.remove('nobody', { purge: true }),
      'NOT_FOUND',
      'there is no user nobody: no account, memory, token or connected app belongs to that name.',
    );
    expect(error.detail).toEqual({ reason: 'user-not-found', user: 'nobody' });
    await expectEngramError(() => s.accounts.remove('no body', { purge: true }), 'INVALID_ARGUMENT', /valid user name/);
    expect(await s.store.dump()).toEqual(before);
    expect(await s.accounts.listSessions()).toHaveLength(3);
  });
});

describe('signIn', () => {
  it('returns the normalised name of the user whose password it is', async () => {
    const { accounts, lines } = setup();
    await accounts.create('alice', PASSWORD);
    expect(await accounts.signIn(' ALICE ', PASSWORD, '192.0.2.1')).toBe('alice');
    expect(lines).toEqual([]);
  });

  it('answers a wrong password, an unknown user, a user without password and a bad name alike, and logs why', async () => {
    const { accounts, lines } = setup();
    await accounts.create('alice', PASSWORD);
    await accounts.create('bob');
    await expectWrong(accounts, 'alice', OTHER_PASSWORD, '192.0.2.1');
    await expectWrong(accounts, 'nobody', PASSWORD, '192.0.2.2');
    await expectWrong(accounts, 'bob', PASSWORD, '192.0.2.3');
    await expectWrong(accounts, 'no body', PASSWORD, '2001:db8::1');
    await expectWrong(accounts, 'alice', '', '192.0.2.4');
    expect(lines).toEqual([
      'sign-in failed for user "alice" from "192.0.2.1": wrong password',
      'sign-in failed for user "nobody" from "192.0.2.2": no such account',
      'sign-in failed for user "bob" from "192.0.2.3": no password set',
      'sign-in failed for user "no body" from "2001:db8::1": not a valid user name',
      'sign-in failed for user "alice" from "192.0.2.4": wrong password',
    ]);
  });

  it('never logs the password, and quotes what the client sent, cut short', async () => {
    const { accounts, lines } = setup({ throttle: { freeFailures: 1 } });
    await accounts.create('alice', PASSWORD);
    const long = `${'x'.repeat(150)}\n"injected`;
    await expectWrong(accounts, 'alice', OTHER_PASSWORD, long);
    await expectWrong(accounts, long, OTHER_PASSWORD, '192.0.2.9');
    await expectEngramError(() => accounts.signIn('alice', OTHER_PASSWORD, long), 'TOO_MANY_ATTEMPTS');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).not.toContain(OTHER_PASSWORD);
      expect(line).not.toContain('\n');
      expect(line.length).toBeLessThan(200);
    }
    expect(lines[0]).toBe(`sign-in failed for user "alice" from "${'x'.repeat(100)}…": wrong password`);
    expect(lines[2]).toMatch(/^sign-in refused for user "alice" from ".*": too many failed attempts, 1 s to wait$/);
  });

  it('slows down a user after 5 failures, from any address, without checking the password', async () => {
    const { store, accounts, advance, lines } = setup();
    await accounts.create('alice', PASSWORD);
    for (let i = 1; i <= 5; i++) await expectWrong(accounts, 'alice', OTHER_PASSWORD, `192.0.2.${i}`);
    const get = vi.spyOn(store.accounts, 'get');
    await expectThrottled(accounts, 'ALICE', '198.51.100.7', 1);
    expect(get).not.toHaveBeenCalled();
    expect(lines.at(-1)).toBe(
      'sign-in refused for user "alice" from "198.51.100.7": too many failed attempts, 1 s to wait',
    );
    // Another user is not slowed down.
    await accounts.create('bob', PASSWORD);
    expect(await accounts.signIn('bob', PASSWORD, '198.51.100.7')).toBe('bob');

    advance(1_000);
    await expectWrong(accounts, 'alice', OTHER_PASSWORD, '198.51.100.7');
    await expectThrottled(accounts, 'alice', '198.51.100.8', 2);
    advance(2_000);
    await expectWrong(accounts, 'alice', OTHER_PASSWORD, '198.51.100.7');
    await expectThrottled(accounts, 'alice', '198.51.100.8', 4);
    advance(4_000);
    expect(await accounts.signIn('alice', PASSWORD, '198.51.100.9')).toBe('alice');
  });

  it('slows down an unknown user just the same', async () => {
    const { accounts } = setup();
    for (let i = 1; i <= 5; i++) await expectWrong(accounts, 'nobody', PASSWORD, `192.0.2.${i}`);
    await expectThrottled(accounts, 'nobody', '198.51.100.7', 1);
  });

  it('forgets the user’s failures when they sign in', async () => {
    const { accounts, advance } = setup();
    await accounts.create('alice', PASSWORD);
    for (let i = 1; i <= 5; i++) await expectWrong(accounts, 'alice', OTHER_PASSWORD, `192.0.2.${i}`);
    advance(1_000);
    expect(await accounts.signIn('alice', PASSWORD, '198.51.100.1')).toBe('alice');
    for (let i = 1; i <= 5; i++) await expectWrong(accounts, 'alice', OTHER_PASSWORD, `203.0.113.${i}`);
    await expectThrottled(accounts, 'alice', '198.51.100.1', 1);
  });

  it('slows down an address after 5 failures, whatever the names it tries, while other addresses sign in', async () => {
    const { accounts } = setup();
    await accounts.create('alice', PASSWORD);
    for (const user of ['a1', 'a2', 'a3', 'a4', 'a5']) await expectWrong(accounts, user, PASSWORD, '203.0.113.66');
    await expectThrottled(accounts, 'alice', '203.0.113.66', 1);
    expect(await accounts.signIn('alice', PASSWORD, '192.0.2.1')).toBe('alice');
  });

  it('does not forget an address’s failures when someone signs in from it', async () => {
    const { accounts } = setup();
    await accounts.create('alice', PASSWORD);
    for (const user of ['a1', 'a2', 'a3', 'a4']) await expectWrong(accounts, user, PASSWORD, '203.0.113.66');
    expect(await accounts.signIn('alice', PASSWORD, '203.0.113.66')).toBe('alice');
    await expectWrong(accounts, 'a5', PASSWORD, '203.0.113.66');
    await expectThrottled(accounts, 'alice', '203.0.113.66', 1);
  });

  it('forgets failures after a quiet spell of 15 minutes', async () => {
    const { accounts, advance } = setup();
    await accounts.create('alice', PASSWORD);
    for (let i = 1; i <= 5; i++) await expectWrong(accounts, 'alice', OTHER_PASSWORD, `192.0.2.${i}`);
    advance(1_000 + 15 * MINUTE);
    for (let i = 1; i <= 5; i++) await expectWrong(accounts, 'alice', OTHER_PASSWORD, `192.0.2.${i}`);
    await expectThrottled(accounts, 'alice', '192.0.2.9', 1);
  });

  it('counts guesses sent all at once: only 5 are checked', async () => {
    const { accounts } = setup();
    await accounts.create('alice', PASSWORD);
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => accounts.signIn('alice', `${OTHER_PASSWORD} ${i}`, `192.0.2.${i}`)),
    );
    const codes = results.map((result) => (result.status === 'rejected' ? (result.reason as EngramError).code : 'OK'));
    expect(codes.filter((code) => code === 'UNAUTHORIZED')).toHaveLength(5);
    expect(codes.filter((code) => code === 'TOO_MANY_ATTEMPTS')).toHaveLength(7);
  });

  it('does not count a sign-in the store failed to answer', async () => {
    const { store, accounts } = setup();
    await accounts.create('alice', PASSWORD);
    const failure = new EngramError('STORE_UNAVAILABLE', 'the database cannot be reached');
    const get = vi.spyOn(store.accounts, 'get').mockRejectedValue(failure);
    for (let i = 0; i < 8; i++) {
      await expectEngramError(() => accounts.signIn('alice', PASSWORD, '192.0.2.1'), 'STORE_UNAVAILABLE');
    }
    get.mockRestore();
    expect(await accounts.signIn('alice', PASSWORD, '192.0.2.1')).toBe('alice');
  });
});

describe('sessions', () => {
  async function signedIn(options: AccountsOptions = {}) {
    const s = setup(options);
    await s.accounts.create('alice', PASSWORD);
    const opened = await s.accounts.openSession('Alice', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0');
    return { ...s, ...opened };
  }

  /** Lets the background "last used" write run. */
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('opens a session with a random secret, keeping only its SHA-256, for 7 days', async () => {
    const { store, secret, session } = await signedIn();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{12}$/),
      hash: createHash('sha256').update(secret).digest('hex'),
      user: 'alice',
      agent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0',
      created: START,
      expires: START + 7 * DAY,
      lastUsed: undefined,
    });
    expect(await store.accounts.listSessions()).toEqual([session]);
    expect(JSON.stringify(await store.accounts.listSessions())).not.toContain(secret);
  });

  it('folds the browser’s name to one printable line of at most 200 characters', async () => {
    const { accounts } = await signedIn();
    const { session } = await accounts.openSession('alice', `Evil\u001b[31m\nAgent ${'y'.repeat(1_000)}`);
    expect(session.agent).toBe(`Evil [31m Agent ${'y'.repeat(200 - 'Evil [31m Agent '.length)}`);
    expect([...session.agent]).toHaveLength(200);
  });

  it('refuses to open a session for a user without an account, as a sign-in is refused', async () => {
    const { accounts, store, lines } = setup();
    await expectEngramError(() => accounts.openSession('nobody', 'Firefox'), 'UNAUTHORIZED', WRONG);
    expect(await store.accounts.listSessions()).toEqual([]);
    expect(lines).toEqual(['session refused for user "nobody": no such account']);
  });

  it('opens no session for a user removed after the account was checked, before the session is kept', async () => {
    const { accounts, store } = setup();
    await accounts.create('alice', PASSWORD);
    expect(await accounts.signIn('alice', PASSWORD, '192.0.2.1')).toBe('alice');
    const addSession = store.accounts.addSession.bind(store.accounts);
    // The removal runs while the session is on its way to the store.
    vi.spyOn(store.accounts, 'addSession').mockImplementation(async (session) => {
      await accounts.remove('alice', { purge: false });
      return addSession(session);
    });
    await expectEngramError(() => accounts.openSession('alice', 'Firefox'), 'UNAUTHORIZED', WRONG);
    expect(await store.accounts.listSessions()).toEqual([]);
    expect(await accounts.list()).toEqual([]);
  });

  it('tells whose session a secret opens, until it expires 7 days later however often it is used', async () => {
    const { accounts, secret, advance } = await signedIn();
    expect(await accounts.sessionUser(secret)).toBe('alice');
    advance(6 * DAY);
    expect(await accounts.sessionUser(secret)).toBe('alice');
    advance(DAY - 1);
    expect(await accounts.sessionUser(secret)).toBe('alice');
    advance(1);
    expect(await accounts.sessionUser(secret)).toBeUndefined();
    expect(await accounts.listSessions('alice')).toEqual([]);
  });

  it('knows no one for a missing, empty, unknown, altered or oversized secret', async () => {
    const { accounts, secret } = await signedIn();
    const altered = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    for (const presented of [undefined, '', 'unknown', altered, secret.repeat(4), ` ${secret}`]) {
      expect(await accounts.sessionUser(presented)).toBeUndefined();
    }
  });

  it('lasts as long as configured', async () => {
    const { accounts, secret, advance } = await signedIn({ sessionTtlMs: 30 * MINUTE });
    advance(30 * MINUTE - 1);
    expect(await accounts.sessionUser(secret)).toBe('alice');
    advance(1);
    expect(await accounts.sessionUser(secret)).toBeUndefined();
  });

  it('records when it was last used, at most once a minute', async () => {
    const { store, accounts, secret, advance } = await signedIn();
    const touch = vi.spyOn(store.accounts, 'touchSession');
    await accounts.sessionUser(secret);
    await settle();
    advance(MINUTE - 1);
    await accounts.sessionUser(secret);
    await settle();
    expect(touch).toHaveBeenCalledTimes(1);
    advance(1);
    await accounts.sessionUser(secret);
    await settle();
    expect(touch).toHaveBeenCalledTimes(2);
    expect((await accounts.listSessions())[0]?.lastUsed).toBe(START + MINUTE);
  });

  it('answers even when recording "last used" fails, and says so to onTouchError', async () => {
    const errors: unknown[] = [];
    const { store, accounts, secret } = await signedIn({ onTouchError: (error) => errors.push(error) });
    const failure = new EngramError('STORE_READ_ONLY', 'read-only database');
    vi.spyOn(store.accounts, 'touchSession').mockRejectedValue(failure);
    expect(await accounts.sessionUser(secret)).toBe('alice');
    await settle();
    expect(errors).toEqual([failure]);
  });

  it('ends a session: its secret opens nothing any more; ending an unknown one does nothing', async () => {
    const { accounts, secret } = await signedIn();
    const other = await accounts.openSession('alice', 'Chromium');
    await accounts.endSession(secret);
    expect(await accounts.sessionUser(secret)).toBeUndefined();
    expect(await accounts.sessionUser(other.secret)).toBe('alice');
    await accounts.endSession(secret);
    await accounts.endSession('');
    await accounts.endSession('unknown');
    expect((await accounts.listSessions()).map((session) => session.id)).toEqual([other.session.id]);
  });

  it('lists the live sessions of a user or of everyone, oldest first, never their hashes', async () => {
    const { accounts, session, advance } = await signedIn();
    await accounts.create('bob', PASSWORD);
    advance(MINUTE);
    const bobs = await accounts.openSession('bob', 'Safari');
    const { hash: _hash, ...info } = session;
    const { hash: _bobsHash, ...bobsInfo } = bobs.session;
    expect(await accounts.listSessions()).toEqual([info, bobsInfo]);
    expect(await accounts.listSessions(' BOB ')).toEqual([bobsInfo]);
    expect(await accounts.listSessions('carol')).toEqual([]);
    await expectEngramError(() => accounts.listSessions('b o b'), 'INVALID_ARGUMENT', /valid user name/);
  });

  it('deletes expired sessions on request, and says how many', async () => {
    const { store, accounts, advance } = await signedIn();
    advance(DAY);
    await accounts.openSession('alice', 'Chromium');
    advance(6 * DAY);
    expect(await accounts.removeExpiredSessions()).toBe(1);
    expect(await store.accounts.listSessions()).toHaveLength(1);
    expect(await accounts.removeExpiredSessions()).toBe(0);
  });
});
