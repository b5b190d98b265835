/**
 * `engram stdio`: MCP over stdin/stdout for local clients (Claude Desktop, Claude Code).
 * stdout carries JSON-RPC only; anything to report goes to stderr. The wire is Engram's
 * own line transport (stdio-transport.ts), which answers bad lines instead of dropping
 * them or the connection. The MCP SDK serves the protocol (stdio-sdk.ts), but is loaded
 * only once the client needs it: the opening (`initialize`, `tools/list`) is answered
 * without it (stdio-opening.ts), and the hot requests take the fast path
 * (stdio-fast-path.ts) once it has proved itself against the SDK. With the fast path
 * switched off, the SDK is loaded at once and answers everything.
 */

import type { Readable, Writable } from 'node:stream';
import type { ParseMessage } from './json-rpc-text.js';
import type { McpServerOptions } from './server.js';
import { createStdioFastPath } from './stdio-fast-path.js';
import { createStdioOpening } from './stdio-opening.js';
import type { SdkConnection } from './stdio-sdk.js';
import { StdioLineTransport } from './stdio-transport.js';

export interface StdioHandle {
  /**
   * Resolves when the connection has closed: stdin ended (and what it sent was handed
   * over), `close()`, stdout failed, or the SDK could not be loaded or serve the opening.
   */
  readonly closed: Promise<void>;
  /**
   * Closes the connection. With a `reason` (the store could not be opened), each request
   * still waiting for the SDK to load is answered with it as an error first (as when the
   * SDK cannot be loaded); those the SDK has are answered as it answers them.
   */
  close(reason?: string): Promise<void>;
}

export interface StdioServing {
  /** The stdio fast path and the opening (ENGRAM_ACCEL_STDIO_FAST_PATH); off: the SDK answers everything. */
  readonly fastPath?: boolean;
  /** The client's side of the wire: the process's own stdin and stdout unless given (tests). */
  readonly stdin?: Readable;
  readonly stdout?: Writable;
}

export function serveMcpStdio(
  options: McpServerOptions,
  log: (line: string) => void,
  { fastPath = true, stdin = process.stdin, stdout = process.stdout }: StdioServing = {},
): StdioHandle {
  let connection: SdkConnection | undefined;
  let parse: ParseMessage | undefined;
  let loading: Promise<void> | undefined;
  /** Asked to close (SIGINT, SIGTERM): the SDK, if still loading, is not connected. */
  let closing = false;
  const fast = fastPath
    ? createStdioFastPath({
        handler: options.handler,
        policy: options.policy,
        caller: (clientName) => options.caller(clientName, undefined),
        prove: async () => {
          const { proveStdioAnswers } = await import('./stdio-sdk.js');
          const proved = await proveStdioAnswers(options);
          if (!proved) log('mcp: the fast path answers otherwise than this SDK: every request goes to the SDK');
          return proved;
        },
      })
    : undefined;
  const loadSdk = () => {
    loading ??= connect();
  };
  const transport = new StdioLineTransport(
    stdin,
    stdout,
    log,
    (json, unit) => {
      if (parse === undefined) throw new Error('a message was handed to the MCP SDK before it was loaded');
      return parse(json, unit);
    },
    { fastPath: fast, opening: fastPath ? { answerer: createStdioOpening(options), loadSdk } : undefined },
  );
  async function connect(): Promise<void> {
    try {
      const [sdk, decode] = await Promise.all([import('./stdio-sdk.js'), import('./json-rpc-decode.js')]);
      if (closing || transport.hasClosed) return;
      parse = decode.parseMessage;
      connection = sdk.connectSdk(options, transport, log);
    } catch (error) {
      const reason = `the MCP SDK could not be loaded (${error instanceof Error ? error.message : String(error)})`;
      log(`mcp: ${reason}`);
      transport.abandon(reason);
    }
  }

  if (fastPath) transport.listen();
  else loadSdk();
  return {
    closed: transport.closed,
    close: async (reason) => {
      closing = true;
      // Whatever still waits for the SDK (not loaded yet, or taking the replayed opening) is answered with why.
      if (reason !== undefined) transport.abandon(reason);
      await loading;
      await (connection ?? transport).close();
    },
  };
}
