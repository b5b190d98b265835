/** Undoing what one assistant did: a revert's preview, applying it, and undoing a revert by its id. */

import { call } from './client';
import type { RevertPreview, RevertResult } from './types';

/** The conflicting entries to revert anyway, and the preview the person saw. */
export interface RevertChoice {
  readonly include: string[];
  readonly version: string;
}

export const revertApi = {
  preview: (actor: string, since: string, until?: string) => {
    const query = new URLSearchParams({ actor, since });
    if (until !== undefined) query.set('until', until);
    return call<RevertPreview>('GET', `/api/revert?${query}`);
  },
  apply: (actor: string, since: string, until: string | undefined, choice: RevertChoice) =>
    call<RevertResult>('POST', '/api/revert', { actor, since, ...(until === undefined ? {} : { until }), ...choice }),
  previewUndo: (id: string) => call<RevertPreview>('GET', `/api/revert/${encodeURIComponent(id)}/undo`),
  undo: (id: string, choice: RevertChoice) =>
    call<RevertResult>('POST', `/api/revert/${encodeURIComponent(id)}/undo`, choice),
};
