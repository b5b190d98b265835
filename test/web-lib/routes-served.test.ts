// The server's list of the web UI's routes (src/http/web.ts, answered with index.html) and
// the UI's own (web/src/lib/routes.ts) are two lists: every address the UI writes must be
// one the server serves the page at, or a reload there finds nothing (as /duplicates once did).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isClientRoute } from '../../src/http/web.js';
import { hrefOf, parse, type Route } from '../../web/src/lib/routes';

/** One route of each view: a view added to Route without one here fails to type-check. */
const ONE_OF_EACH: { readonly [View in Route['view']]: Route } = {
  index: { view: 'index' },
  entry: { view: 'entry', name: 'notes/a/b c?' },
  new: { view: 'new' },
  sessions: { view: 'sessions' },
  history: { view: 'history', name: 'people/ada' },
  trash: { view: 'trash' },
  activity: { view: 'activity' },
  review: { view: 'review' },
  duplicates: { view: 'duplicates' },
  transfer: { view: 'transfer' },
  access: { view: 'access' },
};

describe('the UI routes the server serves', () => {
  it.each(Object.values(ONE_OF_EACH))('serves the page at the address of %o', (route) => {
    expect(isClientRoute(hrefOf(route))).toBe(true);
  });

  it('serves the page at every address the UI reads as a page of its own', () => {
    const segment = fc.oneof(
      fc.constantFrom('entries', 'history', 'new', 'sessions', 'trash', 'duplicates', 'access', 'api', 'people'),
      fc.string({ minLength: 1, maxLength: 6 }).map(encodeURIComponent),
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 4 }), (segments) => {
        const path = `/${segments.join('/')}`;
        if (parse(path).view !== 'index') expect(isClientRoute(path)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });
});
