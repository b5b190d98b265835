/**
 * ENGRAM_ACCELERATORS_OFF, for tests and operators: storage accelerators to switch off
 * (docs/accelerators.md), named with commas (`indexCache,writeCache`), or `all` for the
 * plain path alone. An unknown name is a usage error, not a switch silently left on.
 */

import { ACCELERATOR_NAMES, type AcceleratorName, type Accelerators } from '../open-store.js';
import { UsageError } from './output.js';

/** The switches the variable's value turns off; none when it is unset. */
export function acceleratorsOff(value: string | undefined): Accelerators {
  if (value === undefined) return {};
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const off = names.includes('all') ? ACCELERATOR_NAMES : names;
  for (const name of off) {
    if (!ACCELERATOR_NAMES.includes(name as AcceleratorName)) {
      throw new UsageError(
        `ENGRAM_ACCELERATORS_OFF names no accelerator ${JSON.stringify(name)}: give some of ${ACCELERATOR_NAMES.join(', ')}, or all`,
      );
    }
  }
  return Object.fromEntries(off.map((name) => [name, false]));
}
