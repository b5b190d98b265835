/**
 * A store keeps a session or a grant only for a user with an account (access ports), as
 * signing in to the consent page requires one. Tests that save a grant directly, standing
 * in for the consent step, give its user an account first with this.
 */

import type { AccountStore } from '../../src/access/accounts/port.js';

/** Gives `user` an account without a password, unless they have one (which is kept as it is). */
export async function ensureAccount(accounts: AccountStore, user: string, at = Date.now()): Promise<void> {
  if (!(await accounts.get(user))) await accounts.put({ user, passwordHash: undefined, created: at, updated: at });
}
