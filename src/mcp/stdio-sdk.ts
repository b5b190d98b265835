/**
 * The MCP SDK's side of `engram stdio`, loaded only once a client needs it (stdio.ts):
 * the SDK's server connected over Engram's line transport, and the stdio fast path's
 * proof against the SDK (hot-answer-proof.ts), made over the same transport on
 * in-memory pipes.
 */

import { PassThrough } from 'node:stream';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { proofServerOptions, proveHotAnswers } from './hot-answer-proof.js';
import { parseMessage } from './json-rpc-decode.js';
import { LineQueue } from './line-queue.js';
import { createMcpServerFactory, type McpServerOptions } from './server.js';
import { StdioLineTransport } from './stdio-transport.js';

/** The SDK serving a connection: closing it closes the server and the transport. */
export interface SdkConnection {
  close(): Promise<void>;
}

/** Serves MCP with the SDK over `transport`, which replays to it what was answered before it was loaded. */
export function connectSdk(
  options: McpServerOptions,
  transport: StdioLineTransport,
  log: (line: string) => void,
): SdkConnection {
  return serveStdio(createMcpServerFactory(options), {
    transport,
    onerror: (error) => log(`mcp: ${error.message}`),
  });
}

/**
 * The stdio fast path's proof (hot-answer-proof.ts): the SDK served over this same line
 * transport on in-memory pipes, after a 2025 `initialize`, asked one line at a time.
 */
export async function proveStdioAnswers(options: Pick<McpServerOptions, 'policy' | 'version'>): Promise<boolean> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const answers = new LineQueue(stdout);
  const ask = (line: string) => {
    stdin.write(`${line}\n`);
    return answers.next();
  };
  const handle = serveStdio(createMcpServerFactory(proofServerOptions(options)), {
    transport: new StdioLineTransport(stdin, stdout, () => {}, parseMessage),
  });
  try {
    const clientInfo = { name: 'engram fast path proof', version: '1' };
    const opening = { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo };
    const opened = await ask(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: opening }));
    if (!('result' in JSON.parse(opened))) return false;
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    return await proveHotAnswers(options.policy, ask);
  } finally {
    await handle.close();
  }
}
