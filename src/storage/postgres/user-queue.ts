/**
 * One user's writes in this process, one at a time: they would queue on the user's lock
 * anyway, and a write decided without the lock (store.ts) is saved only if no other
 * write of its user came first, so writers of one user in the same process must not race.
 * Other users' writes run in parallel; other processes are kept in order by PostgreSQL.
 */

export class UserQueue {
  /** The last write queued of each user with writes in flight; it never rejects. */
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(user: string, work: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(user) ?? Promise.resolve()).then(work);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.tails.set(user, tail);
    void tail.then(() => {
      if (this.tails.get(user) === tail) this.tails.delete(user);
    });
    return result;
  }
}
