/**
 * What a user name is, one rule wherever a name comes in (a token's user, --user,
 * ENGRAM_USER, the config file): trimmed and lower-cased, like entry names, so `Ada` and
 * `ada` are one memory; then 1-64 characters with no white space or control characters.
 * Each door phrases its own refusal.
 */

import { charLength } from './text.js';

export const USER_CAP = 64;

/** The user name `raw` stands for, or undefined when it is not a valid one. */
export function normalizeUser(raw: string): string | undefined {
  const user = raw.trim().toLowerCase();
  return user === '' || charLength(user) > USER_CAP || /[\s\p{Cc}]/u.test(user) ? undefined : user;
}
