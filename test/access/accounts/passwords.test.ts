/**
 * Passwords: kept only as scrypt hashes with a salt of their own and the parameters
 * written in; checked by recomputing with those parameters; a malformed or too costly
 * encoding is a wrong password, never an exception; the rules refuse short and
 * oversized passwords with a message that never repeats them.
 */

import { scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkPasswordRules,
  hashPassword,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  verifyPassword,
} from '../../../src/access/accounts/passwords.js';
import { expectEngramError } from '../../memory/fixtures.js';

const PASSWORD = 'correct horse battery staple';

describe('hashPassword', () => {
  it('records the algorithm, its parameters, a 16-byte salt and a 32-byte hash, and never the password', async () => {
    const encoded = await hashPassword(PASSWORD);
    const match = /^scrypt\$N=32768,r=8,p=1\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(encoded);
    expect(match).not.toBeNull();
    expect(Buffer.from(match![1]!, 'base64')).toHaveLength(16);
    expect(Buffer.from(match![2]!, 'base64')).toHaveLength(32);
    expect(encoded).not.toContain(PASSWORD);
  });

  it('is what scrypt computes with the recorded salt and parameters', async () => {
    const [, params, salt, hash] = (await hashPassword(PASSWORD)).split('$');
    expect(params).toBe('N=32768,r=8,p=1');
    const expected = scryptSync(PASSWORD, Buffer.from(salt!, 'base64'), 32, {
      N: 32_768,
      r: 8,
      p: 1,
      maxmem: 64 * 1024 * 1024,
    });
    expect(hash).toBe(expected.toString('base64'));
  });

  it('salts every hash: the same password hashes differently each time', async () => {
    const [first, second] = await Promise.all([hashPassword(PASSWORD), hashPassword(PASSWORD)]);
    expect(first).not.toBe(second);
    expect(first.split('$')[2]).not.toBe(second.split('$')[2]);
  });
});

describe('verifyPassword', () => {
  it('accepts the password and refuses any other', async () => {
    const encoded = await hashPassword(PASSWORD);
    expect(await verifyPassword(PASSWORD, encoded)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', encoded)).toBe(false);
    expect(await verifyPassword(`${PASSWORD} `, encoded)).toBe(false);
    expect(await verifyPassword(PASSWORD.toUpperCase(), encoded)).toBe(false);
    expect(await verifyPassword('', encoded)).toBe(false);
  });

  it('recomputes with the parameters recorded in the hash, not today’s', async () => {
    const salt = Buffer.from('0123456789abcdef');
    const key = scryptSync(PASSWORD, salt, 24, { N: 1024, r: 4, p: 2 });
    const encoded = `scrypt$N=1024,r=4,p=2$${salt.toString('base64')}$${key.toString('base64')}`;
    expect(await verifyPassword(PASSWORD, encoded)).toBe(true);
    expect(await verifyPassword('another password', encoded)).toBe(false);
  });

  it('treats composed and decomposed accents as the same password', async () => {
    const composed = 'crème brûlée au café';
    const encoded = await hashPassword(composed);
    expect(await verifyPassword(composed.normalize('NFD'), encoded)).toBe(true);
  });

  it('is false, without throwing, for a malformed encoding or one that asks too much', async () => {
    const good = await hashPassword(PASSWORD);
    const [, , salt, hash] = good.split('$');
    const malformed = [
      '',
      'not a hash',
      `bcrypt$N=32768,r=8,p=1$${salt}$${hash}`,
      `scrypt$N=32768,r=8$${salt}$${hash}`,
      `scrypt$N=32768,r=8,p=1$${salt}`,
      `scrypt$N=32768,r=8,p=1$${salt}$${hash}$extra`,
      `scrypt$N=32768,r=8,p=1$not base64!$${hash}`,
      `scrypt$N=30000,r=8,p=1$${salt}$${hash}`,
      `scrypt$N=1,r=8,p=1$${salt}$${hash}`,
      `scrypt$N=0,r=8,p=1$${salt}$${hash}`,
      `scrypt$N=32768,r=0,p=1$${salt}$${hash}`,
      `scrypt$N=32768,r=8,p=0$${salt}$${hash}`,
      `scrypt$N=2097152,r=8,p=1$${salt}$${hash}`,
      `scrypt$N=1048576,r=8,p=1$${salt}$${hash}`,
      `scrypt$N=32768,r=8,p=1$AAAA$${hash}`,
      `scrypt$N=32768,r=8,p=1$${salt}$AAAA`,
      ` ${good}`,
      `${good}\n`,
    ];
    for (const encoded of malformed) expect(await verifyPassword(PASSWORD, encoded), encoded).toBe(false);
  });

  it('refuses a password longer than any that can be set without hashing it', async () => {
    const long = 'x'.repeat(MAX_PASSWORD_LENGTH + 1);
    const salt = Buffer.from('0123456789abcdef');
    const key = scryptSync(long, salt, 32, { N: 1024, r: 8, p: 1 });
    expect(
      await verifyPassword(long, `scrypt$N=1024,r=8,p=1$${salt.toString('base64')}$${key.toString('base64')}`),
    ).toBe(false);
  });
});

describe('checkPasswordRules', () => {
  it(`accepts ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters, counted as a person counts them`, () => {
    expect(() => checkPasswordRules('a'.repeat(MIN_PASSWORD_LENGTH))).not.toThrow();
    expect(() => checkPasswordRules('🙂'.repeat(MIN_PASSWORD_LENGTH))).not.toThrow();
    expect(() => checkPasswordRules('a'.repeat(MAX_PASSWORD_LENGTH))).not.toThrow();
  });

  it('refuses a short password, saying how long it must be and how long it is, never what it is', async () => {
    const error = await expectEngramError(
      () => checkPasswordRules('hunter2!!'),
      'INVALID_ARGUMENT',
      /^the password must be at least 10 characters long; this one has 9\. /,
    );
    expect(error.message).not.toContain('hunter2');
    await expectEngramError(() => checkPasswordRules(''), 'INVALID_ARGUMENT', /this one has 0\./);
  });

  it('refuses line breaks and control characters, which a sign-in page cannot send', async () => {
    for (const password of ['first line\nsecond line', 'a password\r', 'tab\tseparated words', 'bell\u0007 and more']) {
      await expectEngramError(
        () => checkPasswordRules(password),
        'INVALID_ARGUMENT',
        'the password must be one line without control characters: the password field of a sign-in page cannot send them.',
      );
    }
    expect(() => checkPasswordRules('spaces and ünïcödé are fine 🙂')).not.toThrow();
  });

  it('refuses an oversized password, so that hashing stays bounded', async () => {
    await expectEngramError(
      () => checkPasswordRules('a'.repeat(MAX_PASSWORD_LENGTH + 1)),
      'INVALID_ARGUMENT',
      'the password must be at most 1024 characters long; this one has 1025.',
    );
  });
});
