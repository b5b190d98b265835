/**
 * How long the event loop was held during some work: the mechanism behind "no request
 * blocks other users" (DESIGN §7), measured as the longest delay of a 1 ms timer, not as
 * the work's wall time (which a noisy machine would make meaningless).
 */

import { monitorEventLoopDelay } from 'node:perf_hooks';

/** Runs `work` and returns it with the longest event-loop delay seen meanwhile, in ms. */
export async function withEventLoopDelay<T>(work: () => Promise<T>): Promise<{ result: T; maxDelayMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  try {
    const result = await work();
    // Let the histogram take the sample that ends the last synchronous stretch.
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { result, maxDelayMs: histogram.max / 1e6 };
  } finally {
    histogram.disable();
  }
}
