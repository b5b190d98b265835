/** Tidying the memory: the pairs of entries that look alike, and merging one into the other (undone as a revert is). */

import { call } from './client';
import type { Duplicates, MergeResult } from './types';

/** The two entries of a merge, at the revisions the person saw: refused if either moved since. */
export interface MergeRequest {
  readonly from: string;
  readonly into: string;
  readonly fromRevision: number;
  readonly intoRevision: number;
}

export const tidyApi = {
  duplicates: (limit?: number) =>
    call<Duplicates>('GET', `/api/duplicates${limit === undefined ? '' : `?limit=${limit}`}`),
  merge: (request: MergeRequest) => call<MergeResult>('POST', '/api/merge', request),
};
