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
import {
  type AuthInfo,
  createMcpHandler,
  LATEST_PROTOCOL_VERSION,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { actorLabel, type Caller } from '../memory/model/caller.js';
import { createFastPath } from './fast-path.js';
import { proofServerOptions, proveHotAnswers } from './hot-answer-proof.js';
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
  /**
   * Answer the hot requests on the fast path (fast-path.ts), once it has proved itself
   * against the SDK (hot-answer-proof.ts); false leaves every request to the SDK. Default true.
   */
  readonly fastPath?: boolean;
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
  // Without a client name the label stays the caller's: no copy of it.
  return who.anonymous && clientName !== undefined
    ? { ...who.caller, label: actorLabel(clientName, who.caller.label) }
    : who.caller;
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

/** The JSON-RPC message an SSE answer carries. */
function sseMessage(text: string): string {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice('data: '.length))
    .join('');
}

/**
 * One request's text asked of an SDK handler in process, as a client would ask it over
 * HTTP (with `version` as its protocol version header, if any): the JSON-RPC message of
 * its SSE answer. Throws when the answer is not one.
 */
export function askOverHttp(handler: McpHttpHandler, version?: string): (body: string) => Promise<string> {
  return async (body) => {
    const response = await handler.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: {
          Accept: 'application/json, text/event-stream',
          'Content-Type': 'application/json',
          ...(version === undefined ? {} : { 'MCP-Protocol-Version': version }),
        },
        body,
      }),
    );
    const text = await response.text();
    if (response.status !== 200 || response.headers.get('content-type') !== 'text/event-stream') {
      throw new Error(`the SDK answered HTTP ${response.status}`);
    }
    return sseMessage(text);
  };
}

/**
 * The HTTP fast path's proof (hot-answer-proof.ts): the SDK's stateless handler, asked in
 * process, without a protocol version header and with the latest.
 */
export async function proveHttpAnswers(options: Pick<McpServerOptions, 'policy' | 'version'>): Promise<boolean> {
  const handler = createMcpHandler(createMcpServerFactory(proofServerOptions(options)), { legacy: 'stateless' });
  try {
    for (const version of [undefined, LATEST_PROTOCOL_VERSION]) {
      if (!(await proveHotAnswers(options.policy, askOverHttp(handler, version)))) return false;
    }
    return true;
  } finally {
    await handler.close();
  }
}

/** The endpoint, its fast path on once proved (or switched off, or refuted: every request to the SDK). */
export async function createMcpHttpEndpoint(options: McpHttpOptions): Promise<McpHttpEndpoint> {
  const { onerror, fastPath: wanted = true, ...serverOptions } = options;
  const factory = createMcpServerFactory({ ...serverOptions, caller: callerFrom });
  const handler = createMcpHandler(factory, { legacy: 'stateless', onerror });
  const serve = toNodeHandler(handler, { onerror });
  const fast = wanted && (await proveHttpAnswers(serverOptions));
  if (wanted && !fast)
    onerror(new Error('the fast path answers otherwise than this SDK: every request goes to the SDK'));
  const fastPath = fast
    ? createFastPath<Request>({
        handler: serverOptions.handler,
        policy: serverOptions.policy,
        caller: ({ who, sessionClient }) => callerOf(who, sessionClient),
      })
    : () => undefined;
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
