/**
 * The rules of changes held for review (DESIGN §13), as pure functions: what the model is
 * told when its change is held, who history names for an approved change, and whether a
 * proposal still applies to the entry as it is now — an append, a describe, or a replace
 * or remove whose old text is still there once, applies to today's body; anything else is
 * a conflict, shown to the person and never applied blindly.
 */

import type { ProposalRecord, StoredEntry } from '../port.js';
import type { Caller } from './caller.js';
import { type EditResult, planEdit } from './edit.js';
import { EngramError } from './errors.js';
import { indexLine } from './index-lines.js';
import type { Policy } from './policy.js';
import { utf8Bytes } from './text.js';

/**
 * The one line the model reads when its change is held: what was saved, for whom, and the
 * index line the entry would have — so it neither thinks the change is made nor tries again.
 */
export function proposedAnswer(proposal: ProposalRecord): string {
  const line = indexLine({
    name: proposal.name,
    size: utf8Bytes(proposal.proposedBody),
    description: proposal.proposedDescription,
  });
  const what = proposal.operation === 'drop' ? `Drop of ${line}` : line;
  return `Saved for the user's review, not applied yet (the user approves or rejects it; do not call again): ${what}`;
}

/** The actor history records for an approved proposal: the app that proposed it and the person who approved it. */
export function approvedActor(proposedBy: string, approver: Caller): string {
  return `${proposedBy} (approved by ${approver.user} via ${approver.label})`;
}

/** A proposal that no longer applies: nothing is changed, the proposal keeps waiting. */
export function proposalConflict(proposal: ProposalRecord, why: string): EngramError {
  return new EngramError(
    'PROPOSAL_CONFLICT',
    `Proposal ${proposal.id} (${proposal.operation} of ${proposal.name} by ${proposal.actor}) no longer applies: ${why}. ` +
      'Nothing was changed. Look at the entry as it is now, make the change by hand if you still want it, and reject the proposal.',
    { reason: 'proposal-conflict', id: proposal.id, name: proposal.name, why },
  );
}

/** What a proposal makes of the entry now: its edit applied to today's entry, or why it cannot be. */
export type Replanned =
  | { readonly applies: true; readonly kind: 'drop' }
  | { readonly applies: true; readonly kind: 'put'; readonly result: EditResult }
  | { readonly applies: false; readonly why: string };

/** Why an edit that applied when proposed cannot apply to the entry as it is now, in a few words. */
const CONFLICT_WHY: Readonly<Record<string, string>> = {
  'old-not-found': 'the text it replaces or removes is no longer in the entry',
  'old-in-empty-body': 'the text it replaces or removes is no longer in the entry (its body is empty)',
};

/**
 * The proposal's edit on the entry as it is now (`current`, undefined when there is none),
 * under today's policy. A refusal that is not a conflict (a cap lowered since) is thrown as
 * the edit rules throw it.
 */
export function replan(proposal: ProposalRecord, current: StoredEntry | undefined, policy: Policy): Replanned {
  if (proposal.operation === 'drop') {
    return current ? { applies: true, kind: 'drop' } : { applies: false, why: 'the entry is no longer there' };
  }
  if (proposal.operation === 'create' && current) {
    return { applies: false, why: `an entry named ${proposal.name} was created since` };
  }
  if (proposal.operation !== 'create' && !current) {
    return { applies: false, why: 'the entry is no longer there (it was dropped since)' };
  }
  try {
    return { applies: true, kind: 'put', result: planEdit(current, proposal, policy) };
  } catch (error) {
    if (error instanceof EngramError && error.code === 'NO_MATCH') {
      return {
        applies: false,
        why: CONFLICT_WHY[error.detail?.reason ?? ''] ?? 'its text no longer matches the entry',
      };
    }
    if (error instanceof EngramError && error.code === 'AMBIGUOUS') {
      return { applies: false, why: 'the text it replaces or removes now occurs more than once in the entry' };
    }
    throw error;
  }
}
