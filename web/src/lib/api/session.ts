/** Who the page is: signing in and out with a password, and the browsers signed in as this user. */

import { pathSegment } from '../paths';
import { call } from './client';
import type { BrowserSession, Session } from './types';

export const sessionApi = {
  session: () => call<Session>('GET', '/api/session'),
  signIn: (user: string, password: string) => call<Session>('POST', '/api/session', { user, password }),
  signOut: () => call<Session>('DELETE', '/api/session'),
  sessions: () => call<{ sessions: BrowserSession[] }>('GET', '/api/sessions'),
  revokeSession: async (id: string) => call<{ revoked: string }>('DELETE', `/api/sessions/${pathSegment(id)}`),
};
