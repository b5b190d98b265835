/**
 * Which MCP client is calling, across a stateless server: at `initialize` the client is
 * handed an `Mcp-Session-Id` that carries its name, signed with a secret of this server
 * process (HMAC-SHA256), and MCP clients send that id back on every later request. A
 * valid id names the client in history; a missing, forged or altered one, or one issued
 * before a restart, names no one (the caller is then recorded as `http`). The name is
 * the client's own claim, as over stdio: the signature only proves this server issued it.
 */

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { actorLabel } from '../memory/model/caller.js';

export interface SessionIds {
  /** A new id carrying `clientName`, or undefined when the name is empty once cleaned. */
  issue(clientName: string): string | undefined;
  /** The client name an id carries, when this server signed it. */
  clientName(sessionId: string | undefined): string | undefined;
}

/**
 * How many ids that checked out are remembered: a client sends its id with every request,
 * and checking its HMAC again cost some 7 µs of each. Only ids this server signed are kept,
 * so what a client sends cannot grow the memory past this; the oldest goes first.
 */
export const REMEMBERED_IDS = 1024;

export function createSessionIds(secret: Buffer = randomBytes(32)): SessionIds {
  const sign = (payload: string) => createHmac('sha256', secret).update(payload).digest('base64url');
  const verified = new Map<string, string>();
  const check = (sessionId: string | undefined): string | undefined => {
    const parts = sessionId?.split('.');
    if (parts?.length !== 3) return undefined;
    const [nonce, name, signature] = parts as [string, string, string];
    const expected = Buffer.from(sign(`${nonce}.${name}`));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return actorLabel(Buffer.from(name, 'base64url').toString('utf8'), '') || undefined;
  };
  return {
    issue(clientName) {
      const name = actorLabel(clientName, '');
      if (name === '') return undefined;
      // A nonce, so that each session's id is its own, as the MCP spec asks.
      const payload = `${randomBytes(12).toString('base64url')}.${Buffer.from(name, 'utf8').toString('base64url')}`;
      return `${payload}.${sign(payload)}`;
    },
    clientName(sessionId) {
      if (sessionId === undefined) return undefined;
      const known = verified.get(sessionId);
      if (known !== undefined) return known;
      const name = check(sessionId);
      if (name === undefined) return undefined;
      if (verified.size >= REMEMBERED_IDS) verified.delete(verified.keys().next().value as string);
      verified.set(sessionId, name);
      return name;
    },
  };
}
