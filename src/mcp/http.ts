/**
 * MCP over Streamable HTTP, stateless: every POST is answered on its own. The hot
 * 2025-era requests (one tools/call, tools/list or ping) take the fast path
 * (fast-path.ts); every other one goes to a fresh server from the same factory as stdio
 * (2025-era requests by the SDK's stateless fallback, 2026 per-request envelopes
 * natively). Whoever the HTTP layer authenticated travels to the tool handler as the
 * SDK's `authInfo`, or straight to the fast path.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { type AuthInfo, createMcpHandler } from '@modelcontextprotocol/server';
import { actorLabel } from '../core/caller.js';
import type { Caller } from '../core/memory.js';
import { createFastPath } from './fast-path.js';
import { createMcpServerFactory, type McpServerOptions } from './server.js';

/** Who is calling over HTTP; without a label, the MCP client's name is recorded in history. */
export interface HttpCaller {
  readonly user: string;
  readonly label?: string | undefined;
  readonly readOnly: boolean;
}

export interface McpHttpEndpoint {
  /** Answers one POST whose JSON body the HTTP layer has already read and parsed. */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, who: HttpCaller): Promise<void>;
  /** Aborts exchanges still in flight. */
  close(): Promise<void>;
}

export type McpHttpOptions = Omit<McpServerOptions, 'caller'> & {
  /** Where failures inside the SDK are reported (never arguments or bodies). */
  readonly onerror: (error: Error) => void;
};

const CALLER_KEY = 'engramCaller';

/** The SDK's carrier for an authenticated caller; the token itself is never passed on. */
function authInfoFor(who: HttpCaller): AuthInfo {
  return {
    token: '',
    clientId: who.label ?? who.user,
    scopes: who.readOnly ? ['memory:read'] : ['memory:read', 'memory:write'],
    extra: { [CALLER_KEY]: who },
  };
}

function callerOf(who: HttpCaller, clientName: string | undefined): Caller {
  return { user: who.user, label: who.label ?? actorLabel(clientName, 'http'), readOnly: who.readOnly };
}

function callerFrom(clientName: string | undefined, authInfo: unknown): Caller {
  const who = (authInfo as AuthInfo | undefined)?.extra?.[CALLER_KEY] as HttpCaller | undefined;
  if (!who) throw new Error('an MCP request reached the tools without an authenticated caller');
  return callerOf(who, clientName);
}

export function createMcpHttpEndpoint(options: McpHttpOptions): McpHttpEndpoint {
  const { onerror, ...serverOptions } = options;
  const factory = createMcpServerFactory({ ...serverOptions, caller: callerFrom });
  const handler = createMcpHandler(factory, { legacy: 'stateless', onerror });
  const serve = toNodeHandler(handler, { onerror });
  const fastPath = createFastPath<HttpCaller>({
    handler: serverOptions.handler,
    policy: serverOptions.policy,
    caller: (who) => callerOf(who, undefined),
  });
  return {
    handle: (req, res, body, who) =>
      fastPath(req, res, body, who) ?? serve(Object.assign(req, { auth: authInfoFor(who) }), res, body),
    close: () => handler.close(),
  };
}
