/**
 * `engram stdio`: MCP over stdin/stdout for local clients (Claude Desktop, Claude Code).
 * stdout carries JSON-RPC only; anything to report goes to stderr. The SDK serves the
 * protocol over Engram's own line transport (stdio-transport.ts), which answers bad lines
 * instead of dropping them or the connection; the hot requests take the fast path
 * (stdio-fast-path.ts) unless it is switched off or has not proved itself against the SDK.
 */

import { PassThrough } from 'node:stream';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { proofServerOptions, proveHotAnswers } from './hot-answer-proof.js';
import { createMcpServerFactory, type McpServerOptions } from './server.js';
import { createStdioFastPath } from './stdio-fast-path.js';
import { StdioLineTransport } from './stdio-transport.js';

export interface StdioHandle {
  /** Resolves when the client closes the connection (stdin ends). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * The stdio fast path's proof (hot-answer-proof.ts): the SDK served over this same line
 * transport on in-memory pipes, after a 2025 `initialize`, asked one line at a time.
 */
export async function proveStdioAnswers(options: Pick<McpServerOptions, 'policy' | 'version'>): Promise<boolean> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let buffered = '';
  stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const next = () => {
    const line = lines.shift();
    return line === undefined ? new Promise<string>((resolve) => waiting.push(resolve)) : Promise.resolve(line);
  };
  const ask = (line: string) => {
    stdin.write(`${line}\n`);
    return next();
  };
  const handle = serveStdio(createMcpServerFactory(proofServerOptions(options)), {
    transport: new StdioLineTransport(stdin, stdout, () => {}),
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
        prove: () =>
          proveStdioAnswers(options).then((proved) => {
            if (!proved) log('mcp: the fast path answers otherwise than this SDK: every request goes to the SDK');
            return proved;
          }),
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
