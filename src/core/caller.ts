/**
 * Who is calling: whose memory, the label history records, and whether they may change
 * anything. Every service that changes memory refuses a read-only caller the same way.
 */

import { EngramError } from './errors.js';
import type { Actor } from './store.js';

export interface Caller extends Actor {
  readonly readOnly?: boolean;
}

export function assertWritable(caller: Caller): void {
  if (caller.readOnly) {
    throw new EngramError(
      'READ_ONLY_TOKEN',
      'This connection is read-only: it can use memory_open but not memory_write or memory_drop. ' +
        'Ask the user to connect with a read-write token to change memory.',
    );
  }
}
