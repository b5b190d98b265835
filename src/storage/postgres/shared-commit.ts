/**
 * One user's writes that queue up behind each other in this process (user-queue.ts) share
 * one transaction and its commit, as SQLite's group commit shares an fsync: each is
 * decided on what the one before it saved and saved by the same statement it would run
 * alone (statements.ts, saveParts, its change counter checked), on one connection
 * holding a transaction, which commits when none waits any more (or MOST_SHARED are in
 * it). A commit of its own costs a save its share of backend CPU and the wait for the
 * WAL's flush: measured side by side, eight saves in one transaction took 0.7x the
 * backend CPU and half the time each of eight that commit alone. No write is answered
 * before the commit that holds it: a write's result (or what its decide threw, decided
 * on rows not yet committed) is kept until then. The transaction is begun by the first
 * write that saves something, so writes that save nothing (or go under the lock) cost no
 * BEGIN and COMMIT. If the transaction fails, nothing of it was written, and each of its
 * writes is made again alone, in order. If the connection is lost while committing, the
 * transaction's id tells on another connection whether it committed (transaction.ts,
 * finish); only when that cannot be told is each write answered that it may or may not
 * have been saved.
 *
 * A shared transaction holds a connection from its first save to its commit, so at most
 * half the pool's connections are in shared transactions at once (store.ts): the other
 * half serves reads, other users' writes alone and everything else, however many users
 * write at once; past that, a user's writes go alone, as they would without sharing.
 */

import type { MutationResult } from '../../memory/port.js';
import type { SharedTransaction } from './transaction.js';

/** Most writes one shared transaction holds: the first of them waits for the last. */
export const MOST_SHARED = 32;

/** A write in a shared transaction: its outcome once the transaction commits, and how to make it again alone. */
interface Member {
  readonly outcome: { readonly result: MutationResult } | { readonly error: unknown };
  readonly again: () => Promise<MutationResult>;
  readonly resolve: (result: MutationResult) => void;
  readonly reject: (error: unknown) => void;
}

/** Most of a pool's `connections` in shared transactions at once: half, so the other half is always free for the rest. */
export function mostSharing(connections: number): number {
  return Math.floor(connections / 2);
}

export class SharedCommit {
  private readonly members: Member[] = [];
  /** Begun by the first write that saves something (begin). */
  transaction: SharedTransaction | undefined;

  /** The transaction, begun by `begin` if none is yet. */
  async begun(begin: () => Promise<SharedTransaction>): Promise<SharedTransaction> {
    this.transaction ??= await begin();
    return this.transaction;
  }

  get size(): number {
    return this.members.length;
  }

  /**
   * Adds a write that was decided (and saved, if it changed anything) in this transaction:
   * `outcome` is what it answers once the transaction commits, `again` makes it alone if
   * the transaction fails. Returns its answer.
   */
  add(outcome: Member['outcome'], again: () => Promise<MutationResult>): Promise<MutationResult> {
    return new Promise((resolve, reject) => this.members.push({ outcome, again, resolve, reject }));
  }

  /** The transaction committed: every write answers what it decided. */
  committed(): void {
    for (const member of this.members) {
      if ('result' in member.outcome) member.resolve(member.outcome.result);
      else member.reject(member.outcome.error);
    }
  }

  /** The commit may or may not have happened: every write answers `error`. */
  uncertain(error: unknown): void {
    for (const member of this.members) member.reject(error);
  }

  /** Nothing was written: every write is made again alone, one after another, in order. */
  async again(): Promise<void> {
    for (const member of this.members) {
      await member.again().then(member.resolve, member.reject);
    }
  }
}
