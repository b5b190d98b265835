/**
 * Changes held for review (DESIGN §13): a review-mode token's or app's memory_write and
 * memory_drop, checked by the Memory service exactly as anyone's, are kept here as
 * proposals instead of applied. No model sees them (they are not entries); they count
 * towards no cap; they expire after the policy's proposalRetentionDays. A person lists
 * them with the diff against the entry as it is now, approves one — its edit applied to
 * today's entry if it still applies, under the caps in force, with history naming both
 * the app and the person — or rejects it. For people only, never for the model.
 *
 * Approving takes the proposal out of the store first, so two approvals never apply it
 * twice; when it does not apply (a conflict, a cap), it is put back as it was.
 */

import { randomBytes } from 'node:crypto';
import { assertWritable, type Caller } from './model/caller.js';
import { checkCaps } from './model/edit.js';
import { EngramError } from './model/errors.js';
import { parseWritableName } from './model/names.js';
import { type Policy, proposalRetentionMs } from './model/policy.js';
import { approvedActor, proposalConflict, type Replanned, replan } from './model/proposals.js';
import { boundedPatch } from './model/revision-diff.js';
import { formatCount, utf8Bytes } from './model/text.js';
import type { Change, ProposalRecord, ProposalStore, Store, StoredEntry, WriteRules } from './port.js';
import type { Recovery } from './recovery.js';

/** A proposal as a person reviews it: against the entry as it is now. */
export interface ProposalView {
  readonly proposal: ProposalRecord;
  /** When it expires unapproved, in ms since the epoch. */
  readonly expires: number;
  /** The live entry of its name now, if any. */
  readonly current: StoredEntry | undefined;
  /** Whether approving would apply it now; when not, `why`. */
  readonly applies: boolean;
  readonly why: string | undefined;
  /**
   * The unified diff from the entry now to what approving makes of it (a conflict's: to
   * what the app asked for); null when too different to show line by line.
   */
  readonly patch: string | null;
  /** The description and body the diff leads to (for a drop: the description as it is, and no body). */
  readonly after: { readonly description: string; readonly body: string };
}

export interface ApproveOutcome {
  readonly proposal: ProposalRecord;
  /** The entry after the approved change (undefined for a drop). */
  readonly entry: StoredEntry | undefined;
}

/** Proposals made by this process so far: the ids of those made in one millisecond sort in the order they came. */
let made = 0;

/**
 * An id for a proposal made `at`: `p`, then the time and a count of this process's
 * proposals (so that ids sort in the order proposals came, as the stores list them by
 * time, then id), then 9 random bytes, URL-safe.
 */
function newProposalId(at: number): string {
  made = (made + 1) % 36 ** 4;
  const order = `${at.toString(36).padStart(9, '0')}${made.toString(36).padStart(4, '0')}`;
  return `p${order}${randomBytes(9).toString('base64url')}`;
}

export class Review {
  constructor(
    private readonly store: Store,
    private readonly proposals: ProposalStore | undefined,
    private readonly policy: Policy,
    private readonly rules: WriteRules,
    private readonly recovery: Recovery,
  ) {}

  /**
   * Holds a change the Memory service checked and decided on `current` (revision
   * `baseRevision`) for the caller's review: TOO_MANY_PROPOSALS when the user has the
   * most waiting already.
   */
  async hold(
    caller: Caller,
    asked: Pick<ProposalRecord, 'name' | 'operation' | 'description' | 'new' | 'old'>,
    current: StoredEntry | undefined,
    proposed: { readonly description: string; readonly body: string },
  ): Promise<ProposalRecord> {
    const at = this.rules.now();
    const proposal: ProposalRecord = {
      id: newProposalId(at),
      user: caller.user,
      ...asked,
      baseRevision: current?.revision ?? 0,
      proposedDescription: proposed.description,
      proposedBody: proposed.body,
      actor: caller.label,
      at,
    };
    const { maxProposals } = this.policy;
    if (!(await this.port().add(proposal, maxProposals, this.expiredBefore()))) {
      throw new EngramError(
        'TOO_MANY_PROPOSALS',
        `The user already has ${formatCount(maxProposals)} changes waiting for their review, the most allowed, ` +
          'so this one was not saved. Tell the user to review the changes waiting in Engram (approve or reject them), ' +
          'then call again.',
      );
    }
    return proposal;
  }

  /** The caller's proposals waiting (not expired), oldest first, each against the entry as it is now. */
  async list(caller: Caller): Promise<ProposalView[]> {
    const proposals = await this.port().list(caller.user, this.expiredBefore());
    const names = [...new Set(proposals.map((proposal) => proposal.name))];
    const entries = new Map((await this.store.get(caller.user, names)).map((entry) => [entry.name, entry]));
    return proposals.map((proposal) => this.view(proposal, entries.get(proposal.name)));
  }

  /** How many proposals of the caller's are waiting. */
  async count(caller: Caller): Promise<number> {
    return (await this.port().list(caller.user, this.expiredBefore())).length;
  }

  /** One waiting proposal against the entry as it is now; NOT_FOUND when it is not waiting. */
  async show(caller: Caller, id: string): Promise<ProposalView> {
    const proposal = await this.waiting(caller, id);
    const [current] = await this.store.get(caller.user, [proposal.name]);
    return this.view(proposal, current);
  }

  /**
   * Applies the proposal to the entry as it is now, under the caps in force now, recorded
   * in history as the app's change approved by the caller; PROPOSAL_CONFLICT (the proposal
   * kept) when it no longer applies, and a cap's refusal (kept too) when it would exceed one.
   */
  async approve(caller: Caller, id: string): Promise<ApproveOutcome> {
    assertMayReview(caller);
    await this.waiting(caller, id);
    const proposal = await this.port().take(caller.user, id);
    if (!proposal) throw notWaiting(id);
    try {
      const name = parseWritableName(proposal.name, this.policy);
      const decide = (current: StoredEntry | undefined, usage: Parameters<typeof checkCaps>[3]): Change => {
        const plan = replan(proposal, current, this.policy);
        if (!plan.applies) throw proposalConflict(proposal, plan.why);
        if (plan.kind === 'drop') return { kind: 'drop' };
        const { result } = plan;
        if (current && result.body === current.body && result.description === current.description) {
          return { kind: 'none' };
        }
        checkCaps(name, current, { description: result.description, size: utf8Bytes(result.body) }, usage, this.policy);
        return { kind: 'put', ...result };
      };
      const approver: Caller = { user: caller.user, label: approvedActor(proposal.actor, caller) };
      const { after } = await this.store.mutate(approver, name, decide, this.rules);
      if (proposal.operation === 'drop') await this.recovery.purgeIfNoRetention();
      return { proposal, entry: after };
    } catch (error) {
      await this.port().add(proposal, Number.POSITIVE_INFINITY, 0);
      throw error;
    }
  }

  /** Discards the proposal, changing no entry. */
  async reject(caller: Caller, id: string): Promise<ProposalRecord> {
    assertMayReview(caller);
    await this.waiting(caller, id);
    const proposal = await this.port().take(caller.user, id);
    if (!proposal) throw notWaiting(id);
    return proposal;
  }

  /** Deletes, for every user, the proposals older than the retention period; how many. */
  async expire(): Promise<number> {
    return this.proposals ? this.proposals.expire(this.expiredBefore()) : 0;
  }

  /** The proposal `id` of the caller's, if it is waiting (not expired); NOT_FOUND otherwise. */
  private async waiting(caller: Caller, id: string): Promise<ProposalRecord> {
    const proposal = await this.port().find(caller.user, id);
    if (!proposal || proposal.at <= this.expiredBefore()) throw notWaiting(id);
    return proposal;
  }

  private view(proposal: ProposalRecord, current: StoredEntry | undefined): ProposalView {
    let plan: Replanned;
    try {
      plan = replan(proposal, current, this.policy);
    } catch (error) {
      if (!(error instanceof EngramError)) throw error;
      plan = { applies: false, why: error.message };
    }
    const after = !plan.applies
      ? { description: proposal.proposedDescription, body: proposal.proposedBody }
      : plan.kind === 'drop'
        ? // The description is not dropped but the whole entry: the diff shows its body going.
          { description: current?.description ?? proposal.proposedDescription, body: '' }
        : { description: plan.result.description, body: plan.result.body };
    const now = current ? `${proposal.name}@${current.revision}` : `${proposal.name} (none)`;
    const patch = boundedPatch(
      { label: now, description: current?.description ?? '', text: current?.body ?? '' },
      {
        label: proposal.operation === 'drop' ? `${proposal.name} (dropped)` : `${proposal.name} (proposed)`,
        description: after.description,
        text: after.body,
      },
    );
    return {
      proposal,
      expires: proposal.at + proposalRetentionMs(this.policy),
      current,
      applies: plan.applies,
      why: plan.applies ? undefined : plan.why,
      patch,
      after,
    };
  }

  /** Everything before this time has expired. */
  private expiredBefore(): number {
    return this.rules.now() - proposalRetentionMs(this.policy);
  }

  private port(): ProposalStore {
    if (!this.proposals) throw new Error('this store keeps no proposals: review mode needs one of Engram’s backends');
    return this.proposals;
  }
}

/** A review-mode caller may not approve or reject (its own proposals least of all). */
function assertMayReview(caller: Caller): void {
  assertWritable(caller);
  if (caller.review) {
    throw new EngramError(
      'READ_ONLY_TOKEN',
      'This connection’s changes need the user’s review, so it cannot approve or reject changes: the user does that ' +
        'in Engram’s web UI (Review) or with engram review.',
      { reason: 'review-caller' },
    );
  }
}

function notWaiting(id: string): EngramError {
  return new EngramError(
    'NOT_FOUND',
    `No proposal ${id} is waiting for review: it was approved, rejected or expired, or never made.`,
    { reason: 'proposal-not-found', id },
  );
}
