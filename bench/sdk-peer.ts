/**
 * The SDK peer for the HTTP benchmark: Engram's three tools served the way most MCP
 * servers over HTTP are written, by the book of the MCP TypeScript SDK v1
 * (@modelcontextprotocol/sdk, its simpleStatelessStreamableHttp example): every POST /mcp
 * gets a new low-level `Server` and a new `StreamableHTTPServerTransport` with
 * `sessionIdGenerator: undefined` (stateless, answering as an SSE stream, the SDK's
 * default), connected, handed the request, closed when the answer is sent. The low-level
 * `Server` rather than `McpServer` because the tools are Engram's own definitions
 * (spec/tools.json, as JSON Schema), which `McpServer.registerTool` would want as zod.
 *
 * Everything under the SDK is Engram's: the tools' definitions, the tool handler, the
 * Memory service and the store, from the composition root, so a row of this peer beside
 * Engram's measures only how Engram serves MCP over HTTP (its own routing, the fast path)
 * against the SDK's way. Callers are found as `engram serve` finds them: no
 * Authorization header, the local user (`--auth none`); a bearer token, checked by
 * Engram's own token check (src/http/auth.ts, the Access service: hash and lookup in the
 * store on every request). It does less than `engram serve` around the call — no request
 * log line, no rate limits, no size limits or Origin checks — all in its favour.
 */

import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { App } from '../src/app.js';
import { createAuthenticate } from '../src/http/auth.js';
import type { Caller } from '../src/memory/model/caller.js';
import { mcpTools } from '../src/memory/tools/definitions.js';
import { createToolHandler, type ToolHandler } from '../src/memory/tools/handler.js';

/** Whom a request without a token acts as: `engram serve --auth none`'s caller. */
export const LOCAL_CALLER: Caller = { user: 'local', label: 'http', readOnly: false };

/** What a tool call learns of its caller: the SDK's `authInfo`, carrying Engram's Caller. */
const CALLER_KEY = 'caller';

/** A server for one request, as the SDK's examples build one. */
function serverFor(handler: ToolHandler, tools: ReturnType<typeof mcpTools>): Server {
  const server = new Server({ name: 'engram-sdk-peer', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const caller = extra.authInfo?.extra?.[CALLER_KEY] as Caller;
    const result = await handler(caller, request.params.name, request.params.arguments);
    return { content: [{ type: 'text', text: result.text }], isError: result.isError };
  });
  return server;
}

function refuse(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(body);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The peer's request listener over the services of one store. */
export function createSdkPeer(app: Pick<App, 'memory' | 'access'>): RequestListener {
  const handler = createToolHandler(app.memory, {
    onUnexpectedError: (error) => process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`),
  });
  const tools = mcpTools();
  const authenticate = createAuthenticate({ mode: 'token', access: app.access }, undefined);

  const handle = async (req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse) => {
    if (req.url !== '/mcp') return refuse(res, 404, 'Not found.');
    // Stateless: no stream to open with GET, no session to end with DELETE (as the SDK's example answers).
    if (req.method !== 'POST') return refuse(res, 405, 'Method not allowed.');
    const text = await readBody(req);
    let caller = LOCAL_CALLER;
    if (req.headers.authorization !== undefined) {
      const outcome = await authenticate(req.headers.authorization);
      if (!outcome.ok) {
        res.setHeader('WWW-Authenticate', outcome.challenge);
        return refuse(res, 401, outcome.message);
      }
      caller = outcome.caller;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return refuse(res, 400, 'Parse error.');
    }
    // What the SDK's bearer middleware (requireBearerAuth) leaves for the transport.
    req.auth = { token: '', clientId: caller.label, scopes: [], extra: { [CALLER_KEY]: caller } };
    const server = serverFor(handler, tools);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      if (!res.headersSent) refuse(res, 500, 'Internal server error.');
      else res.end();
    });
  };
}
