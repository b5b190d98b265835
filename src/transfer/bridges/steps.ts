/**
 * An importer's work, done in steps: a bridge reads its source as a generator that yields
 * between bounded pieces of work (a few thousand lines, a few thousand characters of a
 * body being split). The command line runs it whole; a server runs it with a pause each
 * time it has held the event loop for a few milliseconds, so that no import, however large
 * its file, keeps the server from answering everyone else meanwhile.
 */

/** Work that yields between steps and returns T. */
export type Steps<T> = Generator<void, T, void>;

/** Units of work (lines, characters, records) between two yields: a fraction of a millisecond. */
export const STEP_UNITS = 4096;

/** Milliseconds of work a server does between two pauses. */
const TURN_MS = 8;

/** Runs the work to its end in one stretch (the command line: no one else waits on it). */
export function runWhole<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs the work, awaiting `pause` (a turn of the event loop) whenever it has run TURN_MS since the last. */
export async function runWithPauses<T>(steps: Steps<T>, pause: () => Promise<void>): Promise<T> {
  let since = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - since >= TURN_MS) {
      await pause();
      since = performance.now();
    }
  }
}
