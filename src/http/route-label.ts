/**
 * The labels a request is counted under in /metrics: its door (mcp, api, oauth, web, ws,
 * health, metrics, other) and its route, a template from a fixed set (an API route's
 * template, an OAuth endpoint's path), never the raw path: whatever paths clients send,
 * the number of series stays bounded. Kept here, in one place, for the metrics and the
 * JSON log alike.
 */

export type Door = 'mcp' | 'api' | 'oauth' | 'web' | 'ws' | 'health' | 'metrics' | 'other';

/** Where a request went, as the metrics and the JSON log name it. */
export interface RouteLabel {
  readonly door: Door;
  readonly route: string;
}

/** An unmatched path, and an /api path that is no route. */
export const UNMATCHED: RouteLabel = { door: 'other', route: 'unmatched' };

const FIXED: Record<string, RouteLabel> = {
  '/mcp': { door: 'mcp', route: '/mcp' },
  '/ws': { door: 'ws', route: '/ws' },
  '/healthz': { door: 'health', route: '/healthz' },
  '/readyz': { door: 'health', route: '/readyz' },
  '/metrics': { door: 'metrics', route: '/metrics' },
};

/** A path's door and route before it is served; refined as it is (an API route's template, an OAuth endpoint). */
export function labelOf(path: string): RouteLabel {
  const fixed = FIXED[path];
  if (fixed !== undefined) return fixed;
  if (path === '/api' || path.startsWith('/api/')) return { door: 'api', route: '/api/?' };
  return UNMATCHED;
}

/** A web UI file: its assets under one route, its pages and top files under another. */
export function webLabel(path: string): RouteLabel {
  return { door: 'web', route: path.startsWith('/assets/') ? '/assets/{file}' : '/{page}' };
}
