/** The user's own static tokens and connected apps: listed, created and revoked. */

import { pathSegment } from '../paths';
import { call } from './client';
import type { AppInfo, TokenInfo } from './types';

export const accessApi = {
  tokens: () => call<{ tokens: TokenInfo[] }>('GET', '/api/tokens'),
  createToken: (label: string, readOnly: boolean) =>
    call<{ token: TokenInfo; secret: string }>(
      'POST',
      '/api/tokens',
      label === '' ? { readOnly } : { label, readOnly },
    ),
  revokeToken: async (id: string) => call<{ revoked: string }>('DELETE', `/api/tokens/${pathSegment(id)}`),
  apps: () => call<{ apps: AppInfo[] }>('GET', '/api/apps'),
  revokeApp: async (id: string) => call<{ revoked: string }>('DELETE', `/api/apps/${pathSegment(id)}`),
};
