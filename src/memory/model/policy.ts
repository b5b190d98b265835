/**
 * The rules a memory enforces that a person may configure: which groups can be
 * written (and what each is for, which the tool description tells the model), and
 * the caps that keep entries small enough to read in one call.
 */

export interface Policy {
  /** Writable groups, in display order, each with the purpose shown to the model. */
  readonly groups: Readonly<Record<string, string>>;
  /** Largest body an entry may have, in UTF-8 bytes. */
  readonly entryCap: number;
  /** Largest total of one user's live entries (names, descriptions and bodies), in UTF-8 bytes. */
  readonly userCap: number;
  /**
   * Most live entries one user may have. The model reads the whole index in one call, so
   * the index must stay readable: 1,000 lines of about 100 characters is some 25,000 tokens.
   */
  readonly maxEntries: number;
  /**
   * Largest total of one user's history (descriptions and bodies of kept revisions, the
   * trash included), in UTF-8 bytes. Past it the oldest revisions go first, then the
   * oldest dropped entries; the latest revision of a live entry is always kept.
   */
  readonly historyCap: number;
  /** Longest description, in characters. */
  readonly descriptionCap: number;
  /** Most names one memory_open call may ask for. */
  readonly maxNames: number;
  /** Days a dropped entry stays in the trash before it is purged; 0 purges at once. */
  readonly trashRetentionDays: number;
  /** Revisions kept per entry; older ones are deleted as new ones arrive. */
  readonly historyLimit: number;
  /** Days a change held for review (a review-mode token's or app's) waits before it expires unapproved. */
  readonly proposalRetentionDays: number;
  /** Most changes one user may have waiting for review at once; past it, a review-mode caller's change is refused. */
  readonly maxProposals: number;
}

export const DEFAULT_GROUPS: Readonly<Record<string, string>> = Object.freeze({
  areas: 'ongoing projects',
  people: 'the ones the user works with',
  topics: 'lasting facts about them',
});

export const DEFAULT_POLICY: Policy = Object.freeze({
  groups: DEFAULT_GROUPS,
  entryCap: 16_384,
  userCap: 4 * 1024 * 1024,
  maxEntries: 1_000,
  historyCap: 16 * 1024 * 1024,
  descriptionCap: 200,
  maxNames: 50,
  trashRetentionDays: 30,
  historyLimit: 100,
  proposalRetentionDays: 30,
  maxProposals: 200,
});

const DAY_MS = 24 * 60 * 60 * 1000;

export function trashRetentionMs(policy: Policy): number {
  return policy.trashRetentionDays * DAY_MS;
}

/** How long a proposal waits for review before it expires, in ms. */
export function proposalRetentionMs(policy: Policy): number {
  return policy.proposalRetentionDays * DAY_MS;
}

export function groupList(policy: Policy): string {
  return Object.keys(policy.groups).join(', ');
}
