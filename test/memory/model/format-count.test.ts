/** formatCount groups whole numbers itself, exactly as toLocaleString('en-US') does, without loading ICU. */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCount } from '../../../src/memory/model/text.js';

describe('formatCount', () => {
  it('writes every whole number as toLocaleString("en-US") does', () => {
    for (const value of [0, -0, 1, 999, 1000, 17210, 999_999, 1_000_000, -1, -1000, -1234567, 2 ** 40, 2 ** 53 - 1]) {
      expect(formatCount(value)).toBe(value.toLocaleString('en-US'));
    }
    fc.assert(
      fc.property(fc.maxSafeInteger(), (value) => {
        expect(formatCount(value)).toBe(value.toLocaleString('en-US'));
      }),
    );
  });

  it('leaves any other number to Intl', () => {
    for (const value of [1.5, 1234.5678, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(formatCount(value)).toBe(value.toLocaleString('en-US'));
    }
  });
});
