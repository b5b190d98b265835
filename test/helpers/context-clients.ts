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

/** How an SDK's client connects: over `engram stdio`'s pipes, or over Streamable HTTP. */
interface Wires<Client> {
  stdio(client: Client, parameters: ReturnType<typeof stdioParameters>): Promise<void>;
  http(client: Client, url: URL, init: { requestInit?: RequestInit }): Promise<void>;
}

const V1_WIRES: Wires<ClientV1> = {
  stdio: (client, parameters) => client.connect(new StdioTransportV1(parameters)),
  http: (client, url, init) => client.connect(new HttpTransportV1(url, init)),
};

const V2_WIRES: Wires<ClientV2> = {
  stdio: (client, parameters) => client.connect(new StdioTransportV2(parameters)),
  http: (client, url, init) => client.connect(new HttpTransportV2(url, init)),
};

/** A client kind from its label, a new client of it, its wires, and a look at the client once connected. */
function kind<Client>(
  label: string,
  client: () => Client,
  wires: Wires<Client>,
  check: (connected: Client) => void = () => {},
): ContextClientKind {
  const connected = async (connect: (fresh: Client) => Promise<void>) => {
    const fresh = client();
    await connect(fresh);
    check(fresh);
    return fresh as unknown as ContextClient;
  };
  return {
    label,
    stdio: (server) => connected((fresh) => wires.stdio(fresh, stdioParameters(server))),
    http: (url, token) => connected((fresh) => wires.http(fresh, new URL(url), requestInit(token))),
  };
}

const MODERN = { versionNegotiation: { mode: { pin: '2026-07-28' as const } } };

function modernEra(client: ClientV2): void {
  if (client.getProtocolEra() !== 'modern') throw new Error('the v2 client did not negotiate the 2026 era');
}

export const CONTEXT_CLIENTS: readonly ContextClientKind[] = [
  kind('SDK v1 client', () => new ClientV1({ name: 'context-v1', version: '1.0.0' }), V1_WIRES),
  kind('SDK v2 client (2025 handshake)', () => new ClientV2({ name: 'context-v2', version: '2.0.0' }), V2_WIRES),
  kind(
    'SDK v2 client (2026-07-28 envelope)',
    () => new ClientV2({ name: 'context-v2-modern', version: '2.0.0' }, MODERN),
    V2_WIRES,
    modernEra,
  ),
];
