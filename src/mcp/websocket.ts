/**
 * One MCP connection over one WebSocket: a server from the same factory as stdio and
 * HTTP (same tools, same handler), served by the SDK's connection entry over Engram's
 * WebSocket wire (websocket-transport.ts), for the caller the HTTP layer authenticated.
 * Without a token, history records the MCP client's name, as over HTTP. The connection
 * ends when the socket closes.
 */

import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { WebSocket } from 'ws';
import { type Authenticated, callerOf } from './http.js';
import { createMcpServerFactory, type McpServerOptions } from './server.js';
import { WebSocketTransport, type WebSocketTransportOptions } from './websocket-transport.js';

export type McpWebSocketOptions = Omit<McpServerOptions, 'caller'> &
  WebSocketTransportOptions & {
    /** Who is calling, read at each tool call (the latest answer of `admit`'s token check). */
    readonly who: () => Authenticated;
    /** Where failures inside the SDK are reported (never arguments or bodies). */
    readonly onerror: (error: Error) => void;
  };

export function serveMcpWebSocket(socket: WebSocket, options: McpWebSocketOptions): void {
  const { handler, memory, policy, version, who, onerror, ...wire } = options;
  const factory = createMcpServerFactory({
    handler,
    memory,
    policy,
    version,
    caller: (clientName) => callerOf(who(), clientName),
  });
  serveStdio(factory, { transport: new WebSocketTransport(socket, wire), onerror });
}
