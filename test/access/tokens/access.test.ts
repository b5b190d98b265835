/**
 * The Access service: tokens are random, shown once and stored only as their SHA-256;
 * checking one finds its user, label and rights, refreshes "last used" without writing
 * on every request, and refuses wrong and revoked tokens; bad input is refused with a
 * message that says what fits, and changes nothing.
 */

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAccess, TOKEN_PREFIX } from '../../../src/access/tokens/access.js';
import { MemoryTokenStore } from '../../../src/storage/memory/tokens.js';
import { expectEngramError } from '../../memory/fixtures.js';

function setup() {
  let clock = 1_000_000;
  const tokens = new MemoryTokenStore();
  const access = createAccess(tokens, { now: () => clock });
  return { tokens, access, advance: (ms: number) => (clock += ms) };
}

describe('create', () => {
  it('issues a random token, stores only its SHA-256, and returns it once', async () => {
    const { tokens, access } = setup();
    const first = await access.create({ user: 'ada', label: 'llama.cpp WebUI' });
    const second = await access.create({ user: 'ada', label: 'llama.cpp WebUI' });
    expect(first.token).toMatch(new RegExp(`^${TOKEN_PREFIX}[A-Za-z0-9_-]{43}$`));
    expect(first.token).not.toBe(second.token);
    expect(first.info).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{12}$/),
      user: 'ada',
      label: 'llama.cpp WebUI',
      readOnly: false,
      created: 1_000_000,
      lastUsed: undefined,
      review: false,
    });
    const stored = await tokens.list();
    expect(stored.map((record) => record.hash)).toEqual(
      [first.token, second.token].map((token) => createHash('sha256').update(token).digest('hex')),
    );
    expect(JSON.stringify(stored)).not.toContain(first.token);
  });

  it('labels a token "token <id>" when no label is given, and trims the user', async () => {
    const { access } = setup();
    const { info } = await access.create({ user: '  bob ', readOnly: true });
    expect(info).toMatchObject({ user: 'bob', label: `token ${info.id}`, readOnly: true });
  });

  it('folds a label to one line', async () => {
    const { access } = setup();
    expect((await access.create({ user: 'ada', label: ' Claude\n  Code ' })).info.label).toBe('Claude Code');
  });

  it.each(['', '   ', 'ada lovelace', 'a\u0000b', 'x'.repeat(65)])(
    'refuses the user %j and stores nothing',
    async (user) => {
      const { tokens, access } = setup();
      await expectEngramError(
        () => access.create({ user }),
        'INVALID_ARGUMENT',
        `${JSON.stringify(user)} is not a valid user name: use 1-64 characters without spaces, for example --user alice.`,
      );
      expect(await tokens.list()).toEqual([]);
    },
  );

  it.each(['', ' \n ', 'x'.repeat(101)])('refuses the label %j and stores nothing', async (label) => {
    const { tokens, access } = setup();
    await expectEngramError(
      () => access.create({ user: 'ada', label }),
      'INVALID_ARGUMENT',
      'the label must be one line of 1-100 characters naming who uses the token, for example --label "llama.cpp WebUI".',
    );
    expect(await tokens.list()).toEqual([]);
  });
});

describe('authenticate', () => {
  it('finds the user, label and rights of a valid token', async () => {
    const { access } = setup();
    const { token } = await access.create({ user: 'ada', label: 'phone', readOnly: true });
    expect(await access.authenticate(token)).toEqual({ user: 'ada', label: 'phone', readOnly: true, review: false });
  });

  it('refuses a wrong token, or a right one with a character changed', async () => {
    const { access } = setup();
    const { token } = await access.create({ user: 'ada' });
    const message =
      'The token was not accepted: it is wrong or has been revoked. Ask the owner of this server for a token ' +
      '(engram token create --user NAME) and send it as "Authorization: Bearer <token>".';
    for (const wrong of ['engram_nope', '', `${token}x`, token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A')]) {
      await expectEngramError(() => access.authenticate(wrong), 'UNAUTHORIZED', message);
    }
  });

  it('refreshes "last used" on first use, then at most once a minute', async () => {
    const { access, advance } = setup();
    const { token, info } = await access.create({ user: 'ada' });
    const lastUsed = async () => (await access.list()).find((t) => t.id === info.id)?.lastUsed;
    await access.authenticate(token);
    expect(await lastUsed()).toBe(1_000_000);
    advance(59_999);
    await access.authenticate(token);
    expect(await lastUsed()).toBe(1_000_000);
    advance(1);
    await access.authenticate(token);
    expect(await lastUsed()).toBe(1_060_000);
  });
});

describe('authenticate, when recording "last used" fails or stalls', () => {
  /** Tokens kept in memory whose touch does what `write` does, counting the calls. */
  class TouchingTokens extends MemoryTokenStore {
    readonly calls: string[] = [];

    constructor(private readonly write: () => Promise<void>) {
      super();
    }

    override touch(id: string): Promise<void> {
      this.calls.push(id);
      return this.write();
    }
  }

  function setupWithTouch(write: () => Promise<void>) {
    const tokens = new TouchingTokens(write);
    const failures: unknown[] = [];
    const access = createAccess(tokens, { onTouchError: (error) => failures.push(error) });
    return { access, calls: tokens.calls, failures };
  }

  it.each([
    ['rejects', () => Promise.reject(new Error('database or disk is full'))],
    [
      'throws before returning a promise',
      () => {
        throw new Error('attempt to write a readonly database');
      },
    ],
  ])('still authenticates when the write %s, and reports the failure', async (_, touch) => {
    const { access, failures } = setupWithTouch(touch);
    const { token, info } = await access.create({ user: 'ada', readOnly: true });

    expect(await access.authenticate(token)).toEqual({
      user: 'ada',
      label: info.label,
      readOnly: true,
      review: false,
    });
    await new Promise((resolve) => setImmediate(resolve));

    expect(failures).toEqual([expect.objectContaining({ message: expect.stringMatching(/full|readonly/) })]);
  });

  it('does not wait for the write, and starts no second one for the token while it is under way', async () => {
    const { access, calls } = setupWithTouch(() => new Promise(() => {}));
    const { token, info } = await access.create({ user: 'ada' });

    for (let i = 0; i < 3; i++) expect((await access.authenticate(token)).user).toBe('ada');

    expect(calls).toEqual([info.id]);
  });
});

describe('list and revoke', () => {
  it('lists tokens oldest first, never with a hash or secret', async () => {
    const { access, advance } = setup();
    const a = await access.create({ user: 'ada', label: 'first' });
    advance(1);
    const b = await access.create({ user: 'bob', label: 'second' });
    const listed = await access.list();
    expect(listed).toEqual([a.info, b.info]);
    expect(JSON.stringify(listed)).not.toMatch(/hash|engram_/);
  });

  it('revokes at once: the token is refused from the next check on', async () => {
    const { access } = setup();
    const { token, info } = await access.create({ user: 'ada' });
    const other = await access.create({ user: 'ada' });
    await access.revoke(` ${info.id} `);
    await expectEngramError(() => access.authenticate(token), 'UNAUTHORIZED');
    expect(await access.list()).toEqual([other.info]);
  });

  it("lists one user's own tokens, and revokes only those: another user's token is NOT_FOUND and keeps working", async () => {
    const { access } = setup();
    const ada = await access.create({ user: 'ada', label: 'mine' });
    const bob = await access.create({ user: 'bob', label: 'theirs' });
    expect(await access.listOf('ada')).toEqual([ada.info]);
    await expectEngramError(() => access.revokeOf('ada', bob.info.id), 'NOT_FOUND', /you have no token with the id/);
    expect(await access.authenticate(bob.token)).toMatchObject({ user: 'bob' });
    await access.revokeOf('ada', ` ${ada.info.id} `);
    expect(await access.listOf('ada')).toEqual([]);
    expect((await access.list()).map((token) => token.id)).toEqual([bob.info.id]);
  });

  it('refuses an unknown id, saying where the ids are, and revokes nothing', async () => {
    const { access } = setup();
    const { info } = await access.create({ user: 'ada' });
    await expectEngramError(
      () => access.revoke('nope'),
      'NOT_FOUND',
      'no token has the id "nope"; engram token list shows the ids.',
    );
    expect(await access.list()).toEqual([info]);
  });
});
