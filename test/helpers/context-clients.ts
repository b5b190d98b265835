/**
 * The official SDK clients (v1, and v2 in both protocol eras) as a client that attaches
 * context sees a server: its serverInfo, resources, templates, prompts and completions,
 * besides the tools — over stdio (`engram stdio` spawned) or Streamable HTTP. The
 * clients of mcp-clients.ts and http/clients.ts cover the tools; these, what a person
 * picks in a client's menus.
 */

import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioTransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ENGRAM_CLI } from './engram.js';

interface TextContents {
  readonly uri: string;
  readonly mimeType?: string | undefined;
  readonly text?: string | undefined;
}

/** The calls the v1 and v2 clients share, typed as far as the tests read them. */
export interface ContextClient {
  getServerVersion():
    | { name: string; title?: string | undefined; icons?: { src: string; mimeType?: string | undefined }[] | undefined }
    | undefined;
  getServerCapabilities(): Record<string, unknown> | undefined;
  listResources(): Promise<{ resources: { uri: string; name: string; mimeType?: string | undefined }[] }>;
  listResourceTemplates(): Promise<{
    resourceTemplates: { uriTemplate: string; name: string; mimeType?: string | undefined }[];
  }>;
  readResource(params: { uri: string }): Promise<{ contents: TextContents[] }>;
  listPrompts(): Promise<{
    prompts: { name: string; description?: string | undefined; arguments?: { name: string; required?: boolean }[] }[];
  }>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<{
    messages: { role: string; content: { type: string; text?: string } }[];
  }>;
  complete(params: {
    ref: { type: 'ref/resource'; uri: string } | { type: 'ref/prompt'; name: string };
    argument: { name: string; value: string };
  }): Promise<{ completion: { values: string[]; total?: number | undefined; hasMore?: boolean | undefined } }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<{ isError?: boolean | undefined }>;
  close(): Promise<void>;
}

export interface StdioServer {
  /** `--db PATH`. */
  readonly db: string;
  /** XDG_CONFIG_HOME for the server, so no personal config file is read. */
  readonly configHome: string;
}

export interface ContextClientKind {
  readonly label: string;
  stdio(server: StdioServer): Promise<ContextClient>;
  http(url: string, token?: string): Promise<ContextClient>;
}

function stdioParameters(server: StdioServer) {
  return {
    command: process.execPath,
    args: [ENGRAM_CLI, 'stdio', '--db', server.db],
    env: { XDG_CONFIG_HOME: server.configHome },
    stderr: 'pipe' as const,
  };
}

function requestInit(token: string | undefined): { requestInit?: RequestInit } {
  return token === undefined ? {} : { requestInit: { headers: { Authorization: `Bearer ${token}` } } };
}

const MODERN = { versionNegotiation: { mode: { pin: '2026-07-28' as const } } };

const v1: ContextClientKind = {
  label: 'SDK v1 client',
  async stdio(server) {
    const client = new ClientV1({ name: 'context-v1', version: '1.0.0' });
    await client.connect(new StdioTransportV1(stdioParameters(server)));
    return client as unknown as ContextClient;
  },
  async http(url, token) {
    const client = new ClientV1({ name: 'context-v1', version: '1.0.0' });
    await client.connect(new HttpTransportV1(new URL(url), requestInit(token)));
    return client as unknown as ContextClient;
  },
};

const v2: ContextClientKind = {
  label: 'SDK v2 client (2025 handshake)',
  async stdio(server) {
    const client = new ClientV2({ name: 'context-v2', version: '2.0.0' });
    await client.connect(new StdioTransportV2(stdioParameters(server)));
    return client as unknown as ContextClient;
  },
  async http(url, token) {
    const client = new ClientV2({ name: 'context-v2', version: '2.0.0' });
    await client.connect(new HttpTransportV2(new URL(url), requestInit(token)));
    return client as unknown as ContextClient;
  },
};

const v2Modern: ContextClientKind = {
  label: 'SDK v2 client (2026-07-28 envelope)',
  async stdio(server) {
    const client = new ClientV2({ name: 'context-v2-modern', version: '2.0.0' }, MODERN);
    await client.connect(new StdioTransportV2(stdioParameters(server)));
    if (client.getProtocolEra() !== 'modern') throw new Error('the v2 client did not negotiate the 2026 era');
    return client as unknown as ContextClient;
  },
  async http(url, token) {
    const client = new ClientV2({ name: 'context-v2-modern', version: '2.0.0' }, MODERN);
    await client.connect(new HttpTransportV2(new URL(url), requestInit(token)));
    if (client.getProtocolEra() !== 'modern') throw new Error('the v2 client did not negotiate the 2026 era');
    return client as unknown as ContextClient;
  },
};

export const CONTEXT_CLIENTS: readonly ContextClientKind[] = [v1, v2, v2Modern];
