/**
 * The UI's routes, in the address bar as real paths (the server answers each with
 * index.html, src/http/web.ts): `/` the index, `/entries/{group}/{slug}` an entry, `/new`
 * a new entry, `/sessions` the signed-in browsers; `/entries/{group}/{slug}/history` an
 * entry's history, `/trash`, `/activity`, `/review` (changes held for review), `/duplicates`
 * (possible duplicates, to merge), `/transfer` (import, export, wipe), `/access`.
 * A name in the address that could steer a path elsewhere (`..`, paths.ts) leads to the index.
 * Paths to routes and back, nothing else: router.svelte.ts keeps the one shown.
 */

import { namePath } from './paths';

export type Route =
  | { readonly view: 'index' }
  | { readonly view: 'entry'; readonly name: string }
  | { readonly view: 'new' }
  | { readonly view: 'sessions' }
  | { readonly view: 'history'; readonly name: string }
  | { readonly view: 'trash' | 'activity' | 'review' | 'duplicates' | 'transfer' | 'access' };

/** Pages at a path of their own, with nothing in it. */
const PAGES = ['trash', 'activity', 'review', 'duplicates', 'transfer', 'access'] as const;

/** The entry name of a path's two segments, decoded; undefined for one that is not a name any path can carry. */
function nameOf(group: string, slug: string): string | undefined {
  try {
    const name = `${decodeURIComponent(group)}/${decodeURIComponent(slug)}`;
    namePath(name);
    return name;
  } catch {
    return undefined;
  }
}

/** The route a path shows. */
export function parse(path: string): Route {
  const history = /^\/entries\/([^/]+)\/([^/]+)\/history$/.exec(path);
  if (history?.[1] && history[2]) {
    const name = nameOf(history[1], history[2]);
    return name === undefined ? { view: 'index' } : { view: 'history', name };
  }
  const page = PAGES.find((view) => path === `/${view}`);
  if (page) return { view: page };
  const entry = /^\/entries\/([^/]+)\/([^/]+)$/.exec(path);
  if (entry?.[1] && entry[2]) {
    const name = nameOf(entry[1], entry[2]);
    return name === undefined ? { view: 'index' } : { view: 'entry', name };
  }
  if (path === '/new') return { view: 'new' };
  if (path === '/sessions') return { view: 'sessions' };
  return { view: 'index' };
}

export function hrefOf(route: Route): string {
  switch (route.view) {
    case 'entry':
      return `/entries/${namePath(route.name)}`;
    case 'new':
      return '/new';
    case 'sessions':
      return '/sessions';
    case 'history':
      return `/entries/${namePath(route.name)}/history`;
    case 'trash':
    case 'activity':
    case 'review':
    case 'duplicates':
    case 'transfer':
    case 'access':
      return `/${route.view}`;
    default:
      return '/';
  }
}
