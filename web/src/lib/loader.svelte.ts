/**
 * What a view shows of its calls to the API: whether one is under way, and the problem the
 * last failed one met ('' for none), its wording (messageOf) the same in every view.
 */

/** The words a failure shows: an Error's message (the API's, for an ApiError), or the thrown value. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class Loader {
  /** A call under way. */
  loading = $state(false);
  /** What the last failed call met; set by a failure, cleared by the view when it sees fit. */
  problem = $state('');

  /** Runs `task` while `loading`: what it gives, or undefined when it failed (then `problem` says why). */
  async load<T>(task: () => Promise<T>): Promise<T | undefined> {
    this.loading = true;
    try {
      return await task();
    } catch (error) {
      this.problem = messageOf(error);
      return undefined;
    } finally {
      this.loading = false;
    }
  }
}
