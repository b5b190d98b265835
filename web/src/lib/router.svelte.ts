/**
 * The route shown (routes.ts), kept in the address bar: a $state the views read, set by
 * navigating and by the browser's back and forward.
 */

import { hrefOf, parse, type Route } from './routes';

export { hrefOf, type Route };

export const location$ = $state({ route: parse(window.location.pathname) });

window.addEventListener('popstate', () => {
  location$.route = parse(window.location.pathname);
});

export function navigate(route: Route): void {
  const href = hrefOf(route);
  if (window.location.pathname !== href) window.history.pushState(null, '', href);
  location$.route = route;
  window.scrollTo(0, 0);
}

/** For links: a plain click navigates in place; a modified click (new tab…) is left to the browser. */
export function follow(event: MouseEvent, route: Route): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(route);
}
