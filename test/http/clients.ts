/**
 * The official MCP SDK clients over Streamable HTTP, behind one small interface: v1
 * (`@modelcontextprotocol/sdk`), and v2 in both eras it speaks (the 2025 `initialize`
 * handshake, its default, and the 2026 per-request envelope).
 */

import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface ToolOutcome {
  readonly text: string;
  readonly isError: boolean;
}

export interface HttpSession {
  listTools(): Promise<{ name: string; description?: string | undefined }[]>;
  call(tool: string, args?: Record<string, unknown>): Promise<ToolOutcome>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  readonly clientName?: string;
}

export interface HttpClientKind {
  readonly label: string;
  connect(url: string, options?: ConnectOptions): Promise<HttpSession>;
}

interface SdkClient {
  listTools(): Promise<{ tools: { name: string; description?: string | undefined }[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<{
    content?: unknown;
    isError?: boolean | undefined;
  }>;
  close(): Promise<void>;
}

function sessionOf(client: SdkClient): HttpSession {
  return {
    listTools: async () => (await client.listTools()).tools,
    call: async (tool, args = {}) => {
      const result = await client.callTool({ name: tool, arguments: args });
      const content = (result.content ?? []) as { type: string; text?: string }[];
      return { text: content.map((block) => block.text ?? '').join(''), isError: result.isError === true };
    },
    close: () => client.close(),
  };
}

function requestInit(options: ConnectOptions): { requestInit?: RequestInit } {
  return options.token === undefined ? {} : { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } };
}

const v1: HttpClientKind = {
  label: 'SDK v1 client',
  async connect(url, options = {}) {
    const client = new ClientV1({ name: options.clientName ?? 'http-v1', version: '1.0.0' });
    await client.connect(new HttpTransportV1(new URL(url), requestInit(options)));
    return sessionOf(client as unknown as SdkClient);
  },
};

const v2: HttpClientKind = {
  label: 'SDK v2 client (2025 handshake)',
  async connect(url, options = {}) {
    const client = new ClientV2({ name: options.clientName ?? 'http-v2', version: '2.0.0' });
    await client.connect(new HttpTransportV2(new URL(url), requestInit(options)));
    return sessionOf(client as unknown as SdkClient);
  },
};

const v2Modern: HttpClientKind = {
  label: 'SDK v2 client (2026-07-28 envelope)',
  async connect(url, options = {}) {
    const client = new ClientV2(
      { name: options.clientName ?? 'http-v2-modern', version: '2.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new HttpTransportV2(new URL(url), requestInit(options)));
    if (client.getProtocolEra() !== 'modern') throw new Error('the v2 client did not negotiate the 2026 era');
    return sessionOf(client as unknown as SdkClient);
  },
};

export const HTTP_CLIENTS: readonly HttpClientKind[] = [v1, v2, v2Modern];
