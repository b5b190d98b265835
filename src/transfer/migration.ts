/**
 * Copying a whole store into another (`engram migrate`): SQLite to PostgreSQL when a
 * team outgrows one machine, or back. Everything goes — every user's entries, trash,
 * revisions, usage and tokens, the accounts, and the OAuth clients and connected apps with
 * their codes and tokens — exactly as stored, and the target takes it in one transaction
 * (signed-in browsers are not copied: they sign in again). A target that already holds something is refused unless the caller
 * chose to replace it.
 *
 * The copy streams: the source is read in one snapshot a batch of entries at a time
 * (dumpInBatches), and the target writes each batch as it comes inside its one transaction
 * (loadInBatches), so a memory of some gigabytes is copied in the few megabytes of a batch,
 * never held whole. What is checked of the whole (the caps) is counted as the batches pass
 * and checked once the last is read, before the target commits: a refusal rolls the
 * target back, leaving it as it was.
 */

import { EngramError } from '../memory/model/errors.js';
import type { Policy } from '../memory/model/policy.js';
import { formatCount } from '../memory/model/text.js';
import { entryBytes } from '../memory/model/usage.js';
import { type DumpedEntry, type DumpTables, dumpInBatchesOf, loadInBatchesOf, type Store } from '../memory/port.js';

export interface CopyOptions {
  /** Replace whatever the target holds; without it, a target that is not empty is refused. */
  readonly force: boolean;
  /** How to name the target in messages, e.g. "PostgreSQL postgres://db/engram". */
  readonly target: string;
  /** Told once the source's entries are counted (none written yet), then as they are written. */
  readonly onProgress?: (progress: CopyProgress) => void;
  /** The caps the target serves under: a user past them is refused before the target commits, leaving it as it was. */
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
  let counted = new CopyCount();
  let tables: DumpTables | undefined;
  await loadInBatchesOf(
    to,
    async (batches) => {
      // Counted afresh each time the target reads the source (again, after a transient failure of its own).
      counted = new CopyCount();
      tables = await dumpInBatchesOf(from, {
        total: (entriesTotal) => {
          batches.total(entriesTotal);
          options.onProgress?.({ entriesWritten: 0, entriesTotal });
        },
        batch: (entries) => {
          counted.add(entries);
          return batches.batch(entries);
        },
      });
      // Inside the target's transaction, before it commits: a refusal leaves it as it was.
      if (options.policy) checkCaps(counted.liveUsage, options.policy, options.target);
      return tables;
    },
    {
      replace: options.force,
      onProgress: (entriesWritten, entriesTotal) => options.onProgress?.({ entriesWritten, entriesTotal }),
    },
  );
  return { ...counted.summary(tables as DumpTables), replaced: !empty };
}

/** What a copy counts of its entries as they pass: each user's live usage (for the caps), and the summary's counts. */
class CopyCount {
  /** Each user's live entries and their bytes, counted from the entries themselves. */
  readonly liveUsage = new Map<string, { entries: number; bytes: number }>();
  private readonly users = new Set<string>();
  private live = 0;
  private trash = 0;
  private revisions = 0;

  add(entries: readonly DumpedEntry[]): void {
    for (const entry of entries) {
      this.users.add(entry.user);
      this.revisions += entry.revisions.length;
      if (entry.droppedAt !== null) {
        this.trash++;
        continue;
      }
      this.live++;
      const usage = this.liveUsage.get(entry.user) ?? { entries: 0, bytes: 0 };
      usage.entries++;
      usage.bytes += entryBytes(entry.name, entry.description, entry.size);
      this.liveUsage.set(entry.user, usage);
    }
  }

  summary(tables: DumpTables): Omit<CopySummary, 'replaced'> {
    const users = new Set([...tables.users.map((usage) => usage.user), ...this.users]);
    return {
      users: users.size,
      entries: this.live,
      trash: this.trash,
      revisions: this.revisions,
      tokens: tables.tokens.length,
      accounts: tables.accounts.length,
      apps: tables.grants.length,
    };
  }
}

/**
 * Refuses a copy in which some user's live entries pass the caps: the target would hold a
 * memory its own rules could never have let in.
 */
function checkCaps(
  liveUsage: ReadonlyMap<string, { entries: number; bytes: number }>,
  policy: Pick<Policy, 'userCap' | 'maxEntries'>,
  target: string,
): void {
  const over = [...liveUsage].filter(([, usage]) => usage.entries > policy.maxEntries || usage.bytes > policy.userCap);
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
