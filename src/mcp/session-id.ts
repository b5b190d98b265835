/**
 * Which MCP client is calling, across a stateless server: at `initialize` the client is
 * handed an `Mcp-Session-Id` that carries its name, signed with a secret of this server
 * process (HMAC-SHA256), and MCP clients send that id back on every later request. A
 * valid id names the client in history; a missing, forged or altered one, or one issued
 * before a restart, names no one (the caller is then recorded as `http`). The name is
 * the client's own claim, as over stdio: the signature only proves this server issued it.
 */

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { actorLabel } from '../core/caller.js';

export interface SessionIds {
  /** A new id carrying `clientName`, or undefined when the name is empty once cleaned. */
  issue(clientName: string): string | undefined;
  /** The client name an id carries, when this server signed it. */
  clientName(sessionId: string | undefined): string | undefined;
}

export function createSessionIds(secret: Buffer = randomBytes(32)): SessionIds {
  const sign = (payload: string) => createHmac('sha256', secret).update(payload).digest('base64url');
  return {
    issue(clientName) {
      const name = actorLabel(clientName, '');
      if (name === '') return undefined;
      // A nonce, so that each session's id is its own, as the MCP spec asks.
      const payload = `${randomBytes(12).toString('base64url')}.${Buffer.from(name, 'utf8').toString('base64url')}`;
      return `${payload}.${sign(payload)}`;
    },
    clientName(sessionId) {
      const parts = sessionId?.split('.');
      if (parts?.length !== 3) return undefined;
      const [nonce, name, signature] = parts as [string, string, string];
      const expected = Buffer.from(sign(`${nonce}.${name}`));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      return actorLabel(Buffer.from(name, 'base64url').toString('utf8'), '') || undefined;
    },
  };
}
