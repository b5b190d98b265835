/**
 * Copying a whole store into another (`engram migrate`): SQLite to PostgreSQL when a
 * team outgrows one machine, or back. Everything goes — every user's entries, trash,
 * revisions, usage and tokens, the accounts, and the OAuth clients and connected apps with
 * their codes and tokens — exactly as stored, and the target takes it in one transaction
 * (signed-in browsers are not copied: they sign in again). A target that already holds something is refused unless the caller
 * chose to replace it.
 */

import { EngramError } from '../memory/model/errors.js';
import type { Policy } from '../memory/model/policy.js';
import { formatCount } from '../memory/model/text.js';
import { entryBytes } from '../memory/model/usage.js';
import type { Store, StoreDump } from '../memory/port.js';

export interface CopyOptions {
  /** Replace whatever the target holds; without it, a target that is not empty is refused. */
  readonly force: boolean;
  /** How to name the target in messages, e.g. "PostgreSQL postgres://db/engram". */
  readonly target: string;
  /** Told once the source is read, then as entries are written. */
  readonly onProgress?: (progress: CopyProgress) => void;
  /** The caps the target serves under: a user past them is refused before anything is written. */
  readonly policy?: Pick<Policy, 'userCap' | 'maxEntries'>;
}

export interface CopyProgress {
  readonly entriesWritten: number;
  readonly entriesTotal: number;
}

/** What a whole store holds, as a copy (and a backup: transfer/backup) counts it. */
export interface StoreCounts {
  /** Users with entries or usage. */
  readonly users: number;
  /** Live entries. */
  readonly entries: number;
  /** Dropped copies in the trash. */
  readonly trash: number;
  readonly revisions: number;
  readonly tokens: number;
  readonly accounts: number;
  /** Grants: connected apps. */
  readonly apps: number;
}

/** What was copied. */
export interface CopySummary extends StoreCounts {
  /** True when the target held something that the copy replaced. */
  readonly replaced: boolean;
}

export async function copyStore(from: Store, to: Store, options: CopyOptions): Promise<CopySummary> {
  const empty = await to.isEmpty();
  if (!empty && !options.force) {
    throw new EngramError(
      'CONFLICT',
      `${options.target} is not empty: it already holds entries, trash, tokens, accounts or connected apps, so nothing was copied. ` +
        'Pass --force to replace everything in it with the copy, or copy into an empty database.',
    );
  }
  const dump = await from.dump();
  if (options.policy) checkCaps(dump, options.policy, options.target);
  const entriesTotal = dump.entries.length;
  options.onProgress?.({ entriesWritten: 0, entriesTotal });
  await to.load(dump, {
    replace: options.force,
    onProgress: (entriesWritten) => options.onProgress?.({ entriesWritten, entriesTotal }),
  });
  return { ...summarize(dump), replaced: !empty };
}

/**
 * Refuses a copy in which some user's live entries pass the caps: the target would hold a
 * memory its own rules could never have let in. Counted from the entries themselves.
 */
function checkCaps(dump: StoreDump, policy: Pick<Policy, 'userCap' | 'maxEntries'>, target: string): void {
  const users = new Map<string, { entries: number; bytes: number }>();
  for (const entry of dump.entries) {
    if (entry.droppedAt !== null) continue;
    const usage = users.get(entry.user) ?? { entries: 0, bytes: 0 };
    usage.entries++;
    usage.bytes += entryBytes(entry.name, entry.description, entry.size);
    users.set(entry.user, usage);
  }
  const over = [...users].filter(([, usage]) => usage.entries > policy.maxEntries || usage.bytes > policy.userCap);
  if (over.length === 0) return;
  const listed = over
    .slice(0, 5)
    .map(([user, usage]) => `${user} (${formatCount(usage.entries)} entries, ${formatCount(usage.bytes)} bytes)`)
    .join(', ');
  throw new EngramError(
    'TOO_LARGE',
    `${formatCount(over.length)} user(s) hold more than the caps of ${target} allow ` +
      `(${formatCount(policy.maxEntries)} entries, ${formatCount(policy.userCap)} bytes): ${listed}; nothing was copied. ` +
      'Raise maxEntries or userCap in the config file, or make those memories smaller first.',
  );
}

function summarize(dump: StoreDump): Omit<CopySummary, 'replaced'> {
  const users = new Set([...dump.users.map((usage) => usage.user), ...dump.entries.map((entry) => entry.user)]);
  const live = dump.entries.filter((entry) => entry.droppedAt === null).length;
  return {
    users: users.size,
    entries: live,
    trash: dump.entries.length - live,
    revisions: dump.entries.reduce((sum, entry) => sum + entry.revisions.length, 0),
    tokens: dump.tokens.length,
    accounts: dump.accounts.length,
    apps: dump.grants.length,
  };
}
