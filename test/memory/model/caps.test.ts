/**
 * One measure of "over the cap" for every way in: a write, an import's plan, a restore and
 * an undrop ask caps.ts, so they agree to the byte and to the character at the boundary
 * (the recovery and import tests check each of them against the same caps).
 */

import { describe, expect, it } from 'vitest';
import { bodyOverCap, descriptionOverCap } from '../../../src/memory/model/caps.js';
import { CALLER, newMemory } from '../fixtures.js';

describe('bodyOverCap and descriptionOverCap', () => {
  it('measure a body in UTF-8 bytes and a description in characters, over only past the cap', () => {
    expect(bodyOverCap('é'.repeat(5), { entryCap: 10 })).toBeUndefined();
    expect(bodyOverCap(`${'é'.repeat(5)}x`, { entryCap: 10 })).toEqual({ size: 11, cap: 10 });
    expect(descriptionOverCap('🍵'.repeat(10), { descriptionCap: 10 })).toBeUndefined();
    expect(descriptionOverCap('🍵'.repeat(11), { descriptionCap: 10 })).toEqual({ size: 11, cap: 10 });
  });

  it('are the line a write is refused at, to the byte', async () => {
    const memory = newMemory({ entryCap: 10 });
    // 'éééé' and 'a' and the final newline: 10 bytes, the cap itself.
    await memory.write(CALLER, { name: 'topics/tea', description: 'Tea', new: 'ééééa' });
    await expect(memory.write(CALLER, { name: 'topics/tea', new: 'x' })).rejects.toThrow(
      'topics/tea would be 12 bytes; the cap is 10.',
    );
  });
});
