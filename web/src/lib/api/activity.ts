/** What changed across the whole memory, newest first a page at a time, and who changed it. */

import { call } from './client';
import type { ActivityItem, ActorCount } from './types';

export const activityApi = {
  activity: (actor: string, before?: string) => {
    const query = new URLSearchParams({ limit: '50' });
    if (actor !== '') query.set('actor', actor);
    if (before !== undefined) query.set('before', before);
    return call<{ items: ActivityItem[]; next?: string }>('GET', `/api/activity?${query}`);
  },
  actors: () => call<{ actors: ActorCount[] }>('GET', '/api/activity/actors'),
};
