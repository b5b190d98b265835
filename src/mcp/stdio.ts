/**
 * `engram stdio`: MCP over stdin/stdout for local clients (Claude Desktop, Claude Code).
 * stdout carries JSON-RPC only; anything to report goes to stderr. The SDK serves the
 * protocol over Engram's own line transport (stdio-transport.ts), which answers bad lines
 * instead of dropping them or the connection; the hot requests take the fast path
 * (stdio-fast-path.ts) unless it is switched off.
 */

import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createMcpServerFactory, type McpServerOptions } from './server.js';
import { createStdioFastPath } from './stdio-fast-path.js';
import { StdioLineTransport } from './stdio-transport.js';

export interface StdioHandle {
  /** Resolves when the client closes the connection (stdin ends). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

export function serveMcpStdio(
  options: McpServerOptions,
  log: (line: string) => void,
  { fastPath = true }: { readonly fastPath?: boolean } = {},
): StdioHandle {
  let markClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  process.stdin.once('end', () => markClosed());
  process.stdin.once('close', () => markClosed());
  const fast = fastPath
    ? createStdioFastPath({
        handler: options.handler,
        policy: options.policy,
        caller: (clientName) => options.caller(clientName, undefined),
      })
    : undefined;
  const handle = serveStdio(createMcpServerFactory(options), {
    transport: new StdioLineTransport(process.stdin, process.stdout, log, fast),
    onerror: (error) => log(`mcp: ${error.message}`),
  });
  return {
    closed,
    close: async () => {
      await handle.close();
      markClosed();
    },
  };
}
