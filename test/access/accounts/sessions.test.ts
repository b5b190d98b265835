/**
 * Browser sessions as the web UI lists and ends them (Accounts.session, revokeSession):
 * the session a cookie opens is found with its id, and a user can end only their own.
 */

import { describe, expect, it } from 'vitest';
import { createAccounts } from '../../../src/access/accounts/accounts.js';
import { openMemoryStore } from '../../../src/storage/memory/index.js';

describe('sessions for the web UI', () => {
  it('finds the session a secret opens, and ends a session only for its own user', async () => {
    const accounts = createAccounts(openMemoryStore());
    await accounts.create('alice', 'correct horse battery staple');
    await accounts.create('bob', 'another long passphrase');
    const alice = await accounts.openSession('alice', 'Firefox');
    const bob = await accounts.openSession('bob', 'Chromium');

    expect(await accounts.session(alice.secret)).toMatchObject({
      id: alice.session.id,
      user: 'alice',
      agent: 'Firefox',
    });
    expect(await accounts.session('nope')).toBeUndefined();
    expect(await accounts.revokeSession('alice', bob.session.id)).toBe(false);
    expect(await accounts.sessionUser(bob.secret)).toBe('bob');
    expect(await accounts.revokeSession('alice', alice.session.id)).toBe(true);
    expect(await accounts.sessionUser(alice.secret)).toBeUndefined();
    expect(await accounts.revokeSession('alice', alice.session.id)).toBe(false);
  });
});
