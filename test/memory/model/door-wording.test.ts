/**
 * The shape every door's wording table has (issue #26, item 4): a required entry for every
 * ErrorCode and every ErrorDetail reason, so that the CLI's and REST's tables, typed by it,
 * do not build while a code or reason has no entry. Checked by the type checker
 * (`npx tsc -p tsconfig.json --noEmit` covers test/), as STATUS_BY_CODE is by its Record.
 */

import { describe, expectTypeOf, it } from 'vitest';
import type { DoorWording } from '../../../src/memory/model/door-wording.js';
import type { ErrorCode, ErrorDetail } from '../../../src/memory/model/errors.js';

describe('DoorWording', () => {
  it('requires an entry for every code', () => {
    expectTypeOf<keyof DoorWording['byCode']>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<DoorWording['byCode']>().toEqualTypeOf<Required<DoorWording['byCode']>>();
  });

  it('requires an entry for every reason, worded from that reason’s detail', () => {
    expectTypeOf<keyof DoorWording['byReason']>().toEqualTypeOf<ErrorDetail['reason']>();
    expectTypeOf<DoorWording['byReason']>().toEqualTypeOf<Required<DoorWording['byReason']>>();
    expectTypeOf<Extract<DoorWording['byReason']['purge-live'], (detail: never) => string>>()
      .parameter(0)
      .toEqualTypeOf<Extract<ErrorDetail, { reason: 'purge-live' }>>();
  });
});
