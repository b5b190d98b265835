/**
 * The secrets of a grant (authorization codes, access and refresh tokens): 32 random
 * bytes, base64url, behind a prefix that says what each is (a leaked one is easy to
 * recognise and search for), and kept only as the hex SHA-256 of the whole string, as
 * static tokens are.
 */

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { GrantSecretKind } from '../port.js';

/** Every prefix starts with access.ts's `engram_`; each names its kind after it. */
export const SECRET_PREFIXES: Readonly<Record<GrantSecretKind, string>> = {
  code: 'engram_code_',
  access: 'engram_at_',
  refresh: 'engram_rt_',
};

/** A fresh secret of this kind, to hand out once. */
export function newSecret(kind: GrantSecretKind): string {
  return `${SECRET_PREFIXES[kind]}${randomBytes(32).toString('base64url')}`;
}

/**
 * The secret of this kind that `parent` (a refresh token) rotates into: the HMAC-SHA256 of
 * its kind and `seed` (random, kept with the parent's hash) keyed by the parent itself. The
 * same parent always yields the same successor, so a refresh repeated within its grace
 * window answers the same pair; computing it takes both the parent, which only its holder
 * has, and the seed, which never leaves the store.
 */
export function successorSecret(kind: GrantSecretKind, parent: string, seed: string): string {
  return `${SECRET_PREFIXES[kind]}${createHmac('sha256', parent).update(`${kind}\n${seed}`).digest('base64url')}`;
}

/** A fresh random seed for successorSecret. */
export function newSeed(): string {
  return randomBytes(32).toString('base64url');
}

/** What a store keeps of a secret: its hex SHA-256. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Two hex hashes compared in constant time (a store's lookup by hash is not). */
export function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}
