/**
 * MCP over Streamable HTTP, stateless: every POST is answered on its own. The hot
 * 2025-era requests (one tools/call, tools/list or ping) take the fast path
 * (fast-path.ts); every other one goes to a fresh server from the same factory as stdio
 * (2025-era requests by the SDK's stateless fallback, 2026 per-request envelopes
 * natively). Whoever the HTTP layer authenticated travels to the tool handler as the
 * SDK's `authInfo`, or straight to the fast path, with the client name that the request's
 * Mcp-Session-Id carries (handed out at `initialize`, session-id.ts).
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { type AuthInfo, createMcpHandler } from '@modelcontextprotocol/server';
import { actorLabel, type Caller } from '../memory/model/caller.js';
import { createFastPath } from './fast-path.js';
import { createMcpServerFactory, type McpServerOptions } from './server.js';
import { createSessionIds } from './session-id.js';

export interface McpHttpEndpoint {
  /**
   * Answers one POST whose JSON body the HTTP layer has already read and parsed, for the
   * `caller` it authenticated. With `anonymous` (no token names the caller), history
   * records the MCP client's own name instead of caller.label, when the client gives one.
   */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, caller: Caller, anonymous: boolean): Promise<void>;
  /** Aborts exchanges still in flight. */
  close(): Promise<void>;
}

export type McpHttpOptions = Omit<McpServerOptions, 'caller'> & {
  /** Where failures inside the SDK are reported (never arguments or bodies). */
  readonly onerror: (error: Error) => void;
};

const CALLER_KEY = 'engramCaller';
const SESSION_CLIENT_KEY = 'engramSessionClient';

/** Whom the HTTP layer authenticated, as handed to the endpoint (and to a WebSocket connection). */
export interface Authenticated {
  readonly caller: Caller;
  readonly anonymous: boolean;
}

/** The caller, and the client name its Mcp-Session-Id carries (session-id.ts), if any. */
interface Request {
  readonly who: Authenticated;
  readonly sessionClient: string | undefined;
}

/** The SDK's carrier for an authenticated caller; the token itself is never passed on. */
function authInfoFor({ who, sessionClient }: Request): AuthInfo {
  return {
    token: '',
    clientId: who.anonymous ? who.caller.user : who.caller.label,
    scopes: who.caller.readOnly ? ['memory:read'] : ['memory:read', 'memory:write'],
    extra: { [CALLER_KEY]: who, [SESSION_CLIENT_KEY]: sessionClient },
  };
}

/** The caller a tool call acts as: without a token, history names the MCP client when it gives its name. */
export function callerOf(who: Authenticated, clientName: string | undefined): Caller {
  return who.anonymous ? { ...who.caller, label: actorLabel(clientName, who.caller.label) } : who.caller;
}

/** The name the request itself gives (a 2026 envelope), else the one its session id carries. */
function callerFrom(clientName: string | undefined, authInfo: unknown): Caller {
  const extra = (authInfo as AuthInfo | undefined)?.extra;
  const who = extra?.[CALLER_KEY] as Authenticated | undefined;
  if (!who) throw new Error('an MCP request reached the tools without an authenticated caller');
  return callerOf(who, clientName ?? (extra?.[SESSION_CLIENT_KEY] as string | undefined));
}

/** The client's name when `body` is an `initialize` request. */
function initializingClient(body: unknown): string | undefined {
  const message = body as { method?: unknown; params?: { clientInfo?: { name?: unknown } } } | null;
  const name = typeof message === 'object' && message?.method === 'initialize' && message.params?.clientInfo?.name;
  return typeof name === 'string' ? name : undefined;
}

export function createMcpHttpEndpoint(options: McpHttpOptions): McpHttpEndpoint {
  const { onerror, ...serverOptions } = options;
  const factory = createMcpServerFactory({ ...serverOptions, caller: callerFrom });
  const handler = createMcpHandler(factory, { legacy: 'stateless', onerror });
  const serve = toNodeHandler(handler, { onerror });
  const fastPath = createFastPath<Request>({
    handler: serverOptions.handler,
    policy: serverOptions.policy,
    caller: ({ who, sessionClient }) => callerOf(who, sessionClient),
  });
  const sessionIds = createSessionIds();
  return {
    handle(req, res, body, caller, anonymous) {
      const sessionId = req.headers['mcp-session-id'];
      const request: Request = {
        who: { caller, anonymous },
        sessionClient: sessionIds.clientName(typeof sessionId === 'string' ? sessionId : undefined),
      };
      const initializing = initializingClient(body);
      const issued = initializing === undefined ? undefined : sessionIds.issue(initializing);
      if (issued !== undefined) res.setHeader('Mcp-Session-Id', issued);
      return fastPath(req, res, body, request) ?? serve(Object.assign(req, { auth: authInfoFor(request) }), res, body);
    },
    close: () => handler.close(),
  };
}
