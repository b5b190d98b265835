/** The changes held for review (review-mode tokens and apps): listed with their diffs, counted, approved, rejected. */

import { pathSegment } from '../paths';
import { call } from './client';
import type { Entry, Proposal } from './types';

export const reviewApi = {
  list: () => call<{ proposals: Proposal[] }>('GET', '/api/review'),
  count: () => call<{ count: number }>('GET', '/api/review/count'),
  approve: async (id: string) =>
    call<{ approved: string; name: string; entry: Entry | null }>('POST', `/api/review/${pathSegment(id)}/approve`),
  reject: async (id: string) =>
    call<{ rejected: string; name: string }>('POST', `/api/review/${pathSegment(id)}/reject`),
};
