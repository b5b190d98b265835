/**
 * The floor for the stdio benchmark: a bare JSON-RPC server over stdio, no SDK, that
 * answers `initialize` (echoing the client's protocol version), `ping`, and every
 * `tools/call` with one text result of a fixed size — the size of an Engram open's text,
 * given as its argument. What any MCP server over stdio costs, at the least, for that
 * answer to the same client.
 */

import { createInterface } from 'node:readline';

const text = 'x'.repeat(Number(process.argv[2] ?? 0));

function answer(id: unknown, result: unknown): void {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`);
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line) as { id?: unknown; method?: string; params?: { protocolVersion?: string } };
  if (message.id === undefined) return;
  switch (message.method) {
    case 'initialize':
      answer(message.id, {
        protocolVersion: message.params?.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'bare', version: '1.0.0' },
      });
      return;
    case 'tools/call':
      answer(message.id, { content: [{ type: 'text', text }], isError: false });
      return;
    default:
      answer(message.id, {});
  }
});
