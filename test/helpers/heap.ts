/**
 * How much heap some work held at its peak: the mechanism behind "no request may crash the
 * server" (issue #9), measured as memory held over what was held before, not as the size
 * of the input (which the test chooses).
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Collects garbage: what the test built before (its documents) is not counted, nor its collection timed. */
export function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Runs `work` and returns it with the highest heap in use meanwhile, over the heap held before it. */
export async function withHeapPeak<T>(work: () => Promise<T>): Promise<{ result: T; peakBytes: number }> {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const sample = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 5);
  try {
    const result = await work();
    return { result, peakBytes: peak - before };
  } finally {
    clearInterval(sample);
  }
}
