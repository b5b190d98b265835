/**
 * The floor for the stdio benchmark: a bare JSON-RPC server over stdio, no SDK, that
 * answers `initialize` (echoing the client's protocol version), `ping`, `tools/list` with
 * Engram's three tools as spec/tools.json defines them (read at start, as Engram reads
 * them), and every `tools/call` with one text result of a fixed size — the size of an
 * Engram open's text, given as its argument. What any MCP server over stdio costs, at the
 * least, for those answers to the same client.
 */

import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

/** spec/tools.json's function definitions as MCP tools; npm run bench copies spec/ beside the compiled bench. */
const definitions = JSON.parse(readFileSync(new URL('../spec/tools.json', import.meta.url), 'utf8')) as {
  function: { name: string; description: string; parameters: unknown };
}[];
const tools = definitions.map(({ function: tool }) => ({
  name: tool.name,
  description: tool.description,
  inputSchema: tool.parameters,
}));

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
    case 'tools/list':
      answer(message.id, { tools });
      return;
    case 'tools/call':
      answer(message.id, { content: [{ type: 'text', text }], isError: false });
      return;
    default:
      answer(message.id, {});
  }
});
