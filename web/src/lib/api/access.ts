/** The user's own static tokens and connected apps: listed, created, put in review mode or out of it, and revoked. */

import { pathSegment } from '../paths';
import { call } from './client';
import type { AppInfo, TokenInfo } from './types';

export const accessApi = {
  tokens: () => call<{ tokens: TokenInfo[] }>('GET', '/api/tokens'),
  createToken: (label: string, readOnly: boolean, review: boolean) =>
    call<{ token: TokenInfo; secret: string }>(
      'POST',
      '/api/tokens',
      label === '' ? { readOnly, review } : { label, readOnly, review },
    ),
  setTokenReview: async (id: string, review: boolean) =>
    call<{ token: TokenInfo }>('PUT', `/api/tokens/${pathSegment(id)}`, { review }),
  setAppReview: async (id: string, review: boolean) =>
    call<{ app: AppInfo }>('PUT', `/api/apps/${pathSegment(id)}`, { review }),
  revokeToken: async (id: string) => call<{ revoked: string }>('DELETE', `/api/tokens/${pathSegment(id)}`),
  apps: () => call<{ apps: AppInfo[] }>('GET', '/api/apps'),
  revokeApp: async (id: string) => call<{ revoked: string }>('DELETE', `/api/apps/${pathSegment(id)}`),
};
