/**
 * The secrets of a grant (authorization codes, access and refresh tokens): 32 random
 * bytes, base64url, behind a prefix that says what each is (a leaked one is easy to
 * recognise and search for), and kept only as the hex SHA-256 of the whole string, as
 * static tokens are.
 */

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { GrantSecretKind } from '../account-store.js';

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

/** What a store keeps of a secret: its hex SHA-256. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Two hex hashes compared in constant time (a store's lookup by hash is not). */
export function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}
