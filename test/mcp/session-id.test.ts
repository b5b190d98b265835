/**
 * The signed Mcp-Session-Id that carries an MCP client's name across a stateless server:
 * it round-trips the name, and anything this server did not sign names no one.
 */

import { describe, expect, it } from 'vitest';
import { createSessionIds, REMEMBERED_IDS } from '../../src/mcp/session-id.js';

describe('session ids', () => {
  it('carry the client name back, each id its own, in visible ASCII only', () => {
    const ids = createSessionIds();
    const a = ids.issue('llama.cpp WebUI ✓')!;
    const b = ids.issue('llama.cpp WebUI ✓')!;
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[\x21-\x7e]+$/);
    expect(ids.clientName(a)).toBe('llama.cpp WebUI ✓');
    expect(ids.clientName(b)).toBe('llama.cpp WebUI ✓');
  });

  it('clean the name as history labels are cleaned, and issue nothing for an empty one', () => {
    const ids = createSessionIds();
    expect(ids.clientName(ids.issue('two\nlines\u0007')!)).toBe('two lines');
    expect(ids.clientName(ids.issue('x'.repeat(500))!)).toBe('x'.repeat(100));
    expect(ids.issue(' \n ')).toBeUndefined();
  });

  it('name no one when missing, malformed, altered, or signed by another server (or before a restart)', () => {
    const ids = createSessionIds();
    const id = ids.issue('claude-code')!;
    const [nonce, , signature] = id.split('.');
    const forged = `${nonce}.${Buffer.from('someone-else').toString('base64url')}.${signature}`;
    for (const bad of [
      undefined,
      '',
      'abc',
      `${id}.x`,
      forged,
      `${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}`,
      `${id}A`,
    ]) {
      expect(ids.clientName(bad)).toBeUndefined();
    }
    expect(createSessionIds().clientName(id)).toBeUndefined();
  });

  it('answer the same when asked again, past the ids they remember, and still refuse what they did not sign', () => {
    const ids = createSessionIds();
    const issued = Array.from({ length: REMEMBERED_IDS + 10 }, (_, k) => ids.issue(`client-${k}`)!);
    for (let round = 0; round < 2; round++) {
      for (const [k, id] of issued.entries()) expect(ids.clientName(id)).toBe(`client-${k}`);
    }
    const [nonce, , signature] = issued[0]!.split('.');
    expect(
      ids.clientName(`${nonce}.${Buffer.from('someone-else').toString('base64url')}.${signature}`),
    ).toBeUndefined();
    expect(ids.clientName(`${issued[1]}A`)).toBeUndefined();
  });
});
