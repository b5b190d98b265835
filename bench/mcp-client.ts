/**
 * The one MCP client every stdio server in the benchmarks is driven by: the SDK v1
 * `Client` over a stdio child process, each call failing loudly if the server refuses it.
 * Shared by the stdio benchmark and the peers it starts (bench/peers.ts).
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export interface CallResult {
  readonly content?: unknown;
  readonly isError?: boolean;
}

/** One MCP server behind the SDK v1 client; every call fails loudly if the server refuses it. */
export interface Session {
  call(tool: string, args: Record<string, unknown>): Promise<CallResult>;
  /** One MCP round trip that does nothing: the floor under every call. */
  ping(): Promise<unknown>;
  /** tools/list, as a client does after its opening. */
  listTools(): Promise<unknown>;
  close(): Promise<void>;
  /** The server's process id (bench/idle-memory.ts reads its memory). */
  readonly pid: number | undefined;
}

export async function connect(command: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<Session> {
  const client = new Client({ name: 'engram-bench', version: '1.0.0' });
  const childEnv = Object.fromEntries(
    Object.entries(env).filter((pair): pair is [string, string] => pair[1] !== undefined),
  );
  // The SDK refuses stdio messages over 10 MiB by default; the peer's read_graph passes that at 5,000 entries.
  const transport = new StdioClientTransport({
    command,
    args,
    env: childEnv,
    ...(cwd === undefined ? {} : { cwd }),
    stderr: 'ignore',
    maxBufferSize: 2 ** 30,
  });
  await client.connect(transport);
  return {
    async call(tool, args) {
      const result = (await client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: 600_000,
      })) as CallResult;
      if (result.isError) throw new Error(`${tool} failed during the benchmark: ${textOf(result)}`);
      return result;
    },
    ping: () => client.ping(),
    listTools: () => client.listTools(),
    close: () => client.close(),
    pid: transport.pid ?? undefined,
  };
}

/** The text the model reads from a result. */
export function textOf(result: CallResult): string {
  return ((result.content ?? []) as { text?: string }[]).map((block) => block.text ?? '').join('');
}
