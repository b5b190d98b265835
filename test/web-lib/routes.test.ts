// The web UI's routes (web/src/lib/routes.ts): an address read back as the view it shows,
// and a view written as its address; an address that could steer elsewhere is the index.
import { describe, expect, it } from 'vitest';
import { hrefOf, parse, type Route } from '../../web/src/lib/routes';

describe('parse', () => {
  it.each<[string, Route]>([
    ['/', { view: 'index' }],
    ['/entries/people/ada', { view: 'entry', name: 'people/ada' }],
    ['/entries/notes/a%2Fb%20c', { view: 'entry', name: 'notes/a/b c' }],
    ['/entries/people/ada/history', { view: 'history', name: 'people/ada' }],
    ['/new', { view: 'new' }],
    ['/sessions', { view: 'sessions' }],
    ['/trash', { view: 'trash' }],
    ['/activity', { view: 'activity' }],
    ['/review', { view: 'review' }],
    ['/duplicates', { view: 'duplicates' }],
    ['/transfer', { view: 'transfer' }],
    ['/access', { view: 'access' }],
  ])('reads %s', (path, route) => {
    expect(parse(path)).toEqual(route);
  });

  it.each([
    '/entries/..%2F..%2Fapi/x',
    '/entries/people/%2E%2E',
    '/entries/people/%E0%A4%A',
    '/entries/people',
    '/trash/more',
    '/nowhere',
  ])('reads %s as the index', (path) => {
    expect(parse(path)).toEqual({ view: 'index' });
  });
});

describe('hrefOf', () => {
  it.each<Route>([
    { view: 'index' },
    { view: 'entry', name: 'notes/a/b c?' },
    { view: 'history', name: 'people/ada' },
    { view: 'new' },
    { view: 'sessions' },
    { view: 'trash' },
    { view: 'duplicates' },
    { view: 'access' },
  ])('writes %j as an address parse reads back', (route) => {
    expect(parse(hrefOf(route))).toEqual(route);
  });

  it('encodes the name into the address', () => {
    expect(hrefOf({ view: 'entry', name: 'notes/a/b c?' })).toBe('/entries/notes/a%2Fb%20c%3F');
  });
});
