/**
 * One user's writes in this process, one at a time: they would queue on the user's lock
 * anyway, and a write decided without the lock (store.ts) is saved only if no other
 * write of its user came first, so writers of one user in the same process must not race.
 * The queue says how many wait behind the write running, so that those can share its
 * commit (shared-commit.ts). Other users' writes run in parallel; other processes are
 * kept in order by PostgreSQL.
 */

export class UserQueue {
  /** The last write queued of each user with writes in flight; it never rejects. */
  private readonly tails = new Map<string, Promise<void>>();
  /** How many writes of each user with writes in flight are queued or running. */
  private readonly queued = new Map<string, number>();

  run<T>(user: string, work: () => Promise<T>): Promise<T> {
    this.queued.set(user, (this.queued.get(user) ?? 0) + 1);
    const result = (this.tails.get(user) ?? Promise.resolve()).then(work);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.tails.set(user, tail);
    // Registered before the next write's turn (queued later, on this tail): it counts itself out first.
    void tail.then(() => {
      const left = (this.queued.get(user) ?? 1) - 1;
      if (left === 0) this.queued.delete(user);
      else this.queued.set(user, left);
      if (this.tails.get(user) === tail) this.tails.delete(user);
    });
    return result;
  }

  /** How many of the user's writes wait behind the one running now. */
  waiting(user: string): number {
    return Math.max(0, (this.queued.get(user) ?? 0) - 1);
  }
}
