/**
 * The in-process backend's proposals (memory/port.ts ProposalStore): a map by user and id,
 * gone when the process ends. Each step does its work synchronously, so no other step comes
 * between its checks and its changes; keeping or taking one tells the store (`committed`),
 * which moves the user's change counter and tells its watchers.
 */

import type { ProposalRecord, ProposalStore } from '../../memory/port.js';

export class MemoryProposalStore implements ProposalStore {
  private readonly byUser = new Map<string, Map<string, ProposalRecord>>();

  constructor(private readonly committed: (user: string) => void) {}

  async add(proposal: ProposalRecord, limit: number, expired: number): Promise<boolean> {
    const mine = this.byUser.get(proposal.user) ?? new Map<string, ProposalRecord>();
    for (const [id, kept] of mine) if (kept.at <= expired) mine.delete(id);
    this.byUser.set(proposal.user, mine);
    const kept = mine.size < limit;
    if (kept) mine.set(proposal.id, proposal);
    this.committed(proposal.user);
    return kept;
  }

  async list(user: string, expired: number): Promise<ProposalRecord[]> {
    return [...(this.byUser.get(user)?.values() ?? [])].filter((proposal) => proposal.at > expired).sort(byAge);
  }

  async find(user: string, id: string): Promise<ProposalRecord | undefined> {
    return this.byUser.get(user)?.get(id);
  }

  async take(user: string, id: string): Promise<ProposalRecord | undefined> {
    const proposal = this.byUser.get(user)?.get(id);
    this.byUser.get(user)?.delete(id);
    this.committed(user);
    return proposal;
  }

  async expire(cutoff: number): Promise<number> {
    let expired = 0;
    for (const mine of this.byUser.values()) {
      for (const [id, proposal] of mine) {
        if (proposal.at > cutoff) continue;
        mine.delete(id);
        expired++;
      }
    }
    return expired;
  }

  get size(): number {
    let size = 0;
    for (const mine of this.byUser.values()) size += mine.size;
    return size;
  }

  /** Every proposal, oldest first (then by id), as a dump holds them. */
  all(): ProposalRecord[] {
    return [...this.byUser.values()].flatMap((mine) => [...mine.values()]).sort(byAge);
  }

  /** Puts `proposals` in place of every proposal kept. */
  replaceAll(proposals: readonly ProposalRecord[]): void {
    this.byUser.clear();
    for (const proposal of proposals) {
      const mine = this.byUser.get(proposal.user) ?? new Map<string, ProposalRecord>();
      mine.set(proposal.id, proposal);
      this.byUser.set(proposal.user, mine);
    }
  }
}

function byAge(a: ProposalRecord, b: ProposalRecord): number {
  return a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
