/**
 * `GET /api/search` over HTTP: hits as JSON with plain-text snippets and their match
 * ranges, ranked as the store contract says, each user's own; the refusals of a missing,
 * empty, hostile or oversized query and of a bad limit, in the API's words; read-only
 * tokens may search.
 */

import { describe, expect, it } from 'vitest';
import { api, apiError, LOCAL } from './api-client.js';
import { startTestApp } from './in-process.js';

const search = (q: string, extra = '') => `/api/search?q=${encodeURIComponent(q)}${extra}`;

describe('GET /api/search', () => {
  it('answers the hits, best first, with plain-text snippets and where the words are in them', async () => {
    const server = startTestApp();
    await server.memory.write(LOCAL, {
      name: 'people/ada',
      description: 'Ada, who likes tea',
      new: 'Green <b>tea</b>.',
    });
    await server.memory.write(LOCAL, { name: 'topics/tea', description: 'Drinks', new: 'Coffee too.' });

    const response = await api(server, 'GET', search('tea'));

    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      hits: [
        {
          name: 'topics/tea',
          description: 'Drinks',
          updated: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          snippets: [{ field: 'name', text: 'topics/tea', matches: [[7, 10]] }],
        },
        {
          name: 'people/ada',
          description: 'Ada, who likes tea',
          updated: expect.any(String),
          snippets: [
            { field: 'description', text: 'Ada, who likes tea', matches: [[15, 18]] },
            { field: 'body', text: 'Green <b>tea</b>.', matches: [[9, 12]] },
          ],
        },
      ],
    });
  });

  it('finds as one types, folding case and accents, at most ?limit hits', async () => {
    const server = startTestApp();
    for (const n of [1, 2, 3]) {
      await server.memory.write(LOCAL, { name: `topics/cafe-${n}`, description: 'Café', new: 'Crème.' });
    }

    expect((await api(server, 'GET', search('CRE'))).json.hits).toHaveLength(3);
    expect((await api(server, 'GET', search('creme', '&limit=2'))).json.hits).toHaveLength(2);
    expect((await api(server, 'GET', search('nothing'))).json).toEqual({ hits: [] });
  });

  it("searches only the token's user, and a read-only token may search", async () => {
    const server = startTestApp({ auth: 'token' });
    const ada = (await server.access.create({ user: 'ada', readOnly: true })).token;
    const bob = (await server.access.create({ user: 'bob' })).token;
    await server.memory.write({ user: 'ada', label: 'test' }, { name: 'topics/tea', description: 'Tea', new: 'x' });

    expect((await api(server, 'GET', search('tea'), { token: ada })).json.hits).toHaveLength(1);
    expect((await api(server, 'GET', search('tea'), { token: bob })).json).toEqual({ hits: [] });
    expect((await api(server, 'GET', search('tea'))).status).toBe(401);
  });

  it('answers FTS and tsquery syntax as words, never as an error of the database', async () => {
    const server = startTestApp();
    await server.memory.write(LOCAL, { name: 'topics/ops', description: 'Operators', new: 'this OR that NEAR me' });

    for (const q of ['a OR b"', 'NEAR(', '"that"*', "'me':*", '(this) & !that']) {
      const response = await api(server, 'GET', search(q));
      expect(response.status, q).toBe(200);
    }
    expect((await api(server, 'GET', search('NEAR('))).json.hits).toHaveLength(1);
  });

  it('refuses with 400 a missing, empty, wordless or oversized query, and a bad limit', async () => {
    const server = startTestApp();
    const refusals: [string, string | RegExp][] = [
      ['/api/search', 'GET /api/search takes the words to find as ?q=WORDS.'],
      [search(''), /^the search is empty/],
      [search('"()*'), /^the search has no word to look for/],
      [search('x'.repeat(10_240)), /^the search is 10,?240 characters long; at most 200 are searched/],
      [search('a b c d e f g h i'), /^the search has 9 words; at most 8/],
      [search('tea', '&limit=ten'), '?limit=ten is not understood: use a whole number from 1 to 50, or leave it out.'],
      [search('tea', '&limit=0'), /^the limit of a search is a whole number from 1 to 50/],
      [search('tea', '&q=again'), '?q is given more than once; give it once.'],
      [search('tea', '&sort=name'), /^\?sort is not a parameter of GET \/api\/search/],
    ];
    for (const [path, message] of refusals) {
      const response = await api(server, 'GET', path);
      expect(response.status, path.slice(0, 60)).toBe(400);
      expect(response.json, path.slice(0, 60)).toEqual(apiError('INVALID_ARGUMENT', message));
    }
  });

  it('reads a limit over 50 as 50', async () => {
    const server = startTestApp();
    for (let n = 0; n < 52; n++)
      await server.memory.write(LOCAL, { name: `topics/t${n}`, description: 'Tea', new: 'x' });

    expect((await api(server, 'GET', search('tea', '&limit=500'))).json.hits).toHaveLength(50);
  });
});
