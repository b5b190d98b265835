/**
 * The official SDK clients over Streamable HTTP (v1, and v2 in both protocol eras):
 * tools/list serves the three tools, and write / open / drop round-trip, with the token's
 * label, else the MCP client's name (from the request, or from the signed Mcp-Session-Id
 * handed out at initialize), recorded as the actor of each change.
 */

import { describe, expect, it, onTestFinished } from 'vitest';
import { HTTP_CLIENTS } from './clients.js';
import { startTestServer } from './fixtures.js';

describe.each(HTTP_CLIENTS)('$label over HTTP', (kind) => {
  it('lists the three tools', async () => {
    const server = await startTestServer();
    const session = await kind.connect(server.url);
    onTestFinished(() => session.close());
    expect((await session.listTools()).map((tool) => tool.name)).toEqual([
      'memory_open',
      'memory_write',
      'memory_drop',
    ]);
  });

  it('round-trips write, open and drop, recording the client name as the actor', async () => {
    const server = await startTestServer();
    const session = await kind.connect(server.url, { clientName: 'round-trip' });
    onTestFinished(() => session.close());

    expect(await session.call('memory_open')).toMatchObject({ isError: false, text: expect.stringMatching(/empty/i) });
    expect(
      await session.call('memory_write', {
        name: 'People/Allozaur',
        description: 'llama.cpp WebUI maintainer',
        new: 'Met at FOSDEM.',
      }),
    ).toEqual({ text: 'people/allozaur (15 bytes): llama.cpp WebUI maintainer', isError: false });
    expect(await session.call('memory_write', { name: 'people/allozaur', new: 'Likes Svelte.' })).toEqual({
      text: 'people/allozaur (29 bytes): llama.cpp WebUI maintainer',
      isError: false,
    });
    expect(await session.call('memory_open')).toEqual({
      text: 'people/allozaur (29 bytes): llama.cpp WebUI maintainer',
      isError: false,
    });
    const opened = await session.call('memory_open', { names: ['people/allozaur'] });
    expect(opened.isError).toBe(false);
    expect(opened.text).toContain('Met at FOSDEM.\nLikes Svelte.');

    const dropped = await session.call('memory_drop', { name: 'people/allozaur' });
    expect(dropped.isError).toBe(false);
    expect(dropped.text).toContain('people/allozaur');
    expect(await server.memory.index({ user: 'local', label: 'test' })).toEqual([]);
    // Stateless all the same: 2025-era clients echo the Mcp-Session-Id that carries their name.
    expect((await server.store.history('local', 'people/allozaur')).map((r) => r.actor)).toEqual([
      'round-trip',
      'round-trip',
      'round-trip',
    ]);
  });

  it('answers a refused write with isError and changes nothing', async () => {
    const server = await startTestServer();
    const session = await kind.connect(server.url);
    onTestFinished(() => session.close());
    const refused = await session.call('memory_write', { name: 'people/nobody', new: 'x' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/people\/nobody/);
    expect(await server.memory.index({ user: 'local', label: 'test' })).toEqual([]);
  });

  it('records the token label as the actor when the server asks for tokens', async () => {
    const server = await startTestServer({ auth: 'token' });
    const { token } = await server.access.create({ user: 'ada', label: 'llama.cpp WebUI' });
    const session = await kind.connect(server.url, { token, clientName: 'ignored-with-tokens' });
    onTestFinished(() => session.close());
    await session.call('memory_write', { name: 'topics/me', description: 'Who I am', new: 'Name: Ada.' });
    expect((await server.store.history('ada', 'topics/me')).map((r) => r.actor)).toEqual(['llama.cpp WebUI']);
  });
});
