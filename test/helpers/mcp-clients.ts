/**
 * The official MCP SDK clients, each behind one small interface, so every end-to-end
 * scenario runs unchanged against `engram stdio` with each of them: the v1 SDK
 * (`@modelcontextprotocol/sdk`), and the v2 client in both eras it speaks — the 2025
 * `initialize` handshake (its default) and the 2026 per-request envelope.
 */

import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioTransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ENGRAM_CLI } from './engram.js';

export interface ListedTool {
  readonly name: string;
  readonly description?: string | undefined;
  readonly inputSchema: unknown;
  readonly annotations?: Record<string, unknown> | undefined;
}

/** A tool result as the model would see it: its text, and whether it is an error. */
export interface ToolOutcome {
  readonly text: string;
  readonly isError: boolean;
}

export interface McpSession {
  /** The server's `instructions`. */
  readonly instructions: string | undefined;
  listTools(): Promise<ListedTool[]>;
  /** Calls a tool; a protocol error (unknown tool, …) rejects. */
  call(tool: string, args?: Record<string, unknown>): Promise<ToolOutcome>;
  /** Ends the session; the server exits when its stdin closes. */
  close(): Promise<void>;
}

export interface ServerOptions {
  /** The flags that select the database: `--db PATH` or `--database-url URL`. */
  readonly database: readonly string[];
  /** XDG_CONFIG_HOME for the server, so no personal config file is read. */
  readonly configHome: string;
  /** `--config FILE`. */
  readonly config?: string;
  /** The client name sent to the server (recorded as the actor of each change). */
  readonly clientName?: string;
  /** More flags for `engram stdio` (`--review`). */
  readonly flags?: readonly string[];
}

export interface McpClientKind {
  readonly label: string;
  connect(options: ServerOptions): Promise<McpSession>;
}

function serverParameters(options: ServerOptions) {
  const config = options.config === undefined ? [] : ['--config', options.config];
  return {
    command: process.execPath,
    args: [ENGRAM_CLI, 'stdio', ...options.database, ...config, ...(options.flags ?? [])],
    env: { XDG_CONFIG_HOME: options.configHome },
    stderr: 'pipe' as const,
  };
}

interface SdkResult {
  content?: unknown;
  isError?: boolean | undefined;
}

/** The text of a result made of text blocks (what Engram always returns). */
function outcomeOf(result: SdkResult): ToolOutcome {
  const content = (result.content ?? []) as { type: string; text?: string }[];
  if (content.some((block) => block.type !== 'text')) {
    throw new Error(`expected only text content, got ${JSON.stringify(content)}`);
  }
  return { text: content.map((block) => block.text).join(''), isError: result.isError === true };
}

/** The calls the v1 and v2 clients share, and how to reach the server's instructions. */
interface SdkClient {
  listTools(): Promise<{ tools: ListedTool[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<SdkResult>;
  getInstructions(): string | undefined;
  close(): Promise<void>;
}

function sessionOf(client: SdkClient): McpSession {
  return {
    instructions: client.getInstructions(),
    listTools: async () => (await client.listTools()).tools,
    call: async (tool, args = {}) => outcomeOf(await client.callTool({ name: tool, arguments: args })),
    close: () => client.close(),
  };
}

const v1: McpClientKind = {
  label: 'SDK v1 client',
  async connect(options) {
    const client = new ClientV1({ name: options.clientName ?? 'e2e-v1', version: '1.0.0' });
    await client.connect(new StdioTransportV1(serverParameters(options)));
    return sessionOf(client as unknown as SdkClient);
  },
};

const v2: McpClientKind = {
  label: 'SDK v2 client (2025 handshake)',
  async connect(options) {
    const client = new ClientV2({ name: options.clientName ?? 'e2e-v2', version: '2.0.0' });
    await client.connect(new StdioTransportV2(serverParameters(options)));
    return sessionOf(client as unknown as SdkClient);
  },
};

const v2Modern: McpClientKind = {
  label: 'SDK v2 client (2026-07-28 envelope)',
  async connect(options) {
    const client = new ClientV2(
      { name: options.clientName ?? 'e2e-v2-modern', version: '2.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StdioTransportV2(serverParameters(options)));
    if (client.getProtocolEra() !== 'modern') throw new Error('the v2 client did not negotiate the 2026 era');
    return sessionOf(client as unknown as SdkClient);
  },
};

export const MCP_CLIENTS: readonly McpClientKind[] = [v1, v2, v2Modern];
