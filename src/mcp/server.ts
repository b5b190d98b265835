/**
 * The MCP server, built from the tool definitions and the tool handler: `tools/list`
 * serves the three tools exactly as specified, `tools/call` dispatches to the handler;
 * the memory's resources (resources.ts) and prompts (prompts.ts) for clients that attach
 * context; and the server's title and icon (identity.ts). One factory serves every MCP
 * era the SDK speaks (2025 handshake and 2026 per-request envelopes), over stdio, HTTP
 * and WebSocket alike.
 */

import { CLIENT_INFO_META_KEY, type McpServerFactory, ProtocolError, Server } from '@modelcontextprotocol/server';
import type { Caller } from '../memory/memory.js';
import type { Policy } from '../memory/model/policy.js';
import { isToolName, mcpTools } from '../memory/tools/definitions.js';
import type { ToolHandler } from '../memory/tools/handler.js';
import { SERVER_INSTRUCTIONS, serverCapabilities, serverInfo } from './identity.js';
import { completesWithNames, getPrompt, PROMPT_LIST } from './prompts.js';
import {
  createMemoryResources,
  ENTRY_RESOURCE_TEMPLATE,
  ENTRY_TEMPLATE,
  type EntryNames,
  INDEX_RESOURCE,
} from './resources.js';
import { callToolResult, unknownTool } from './tool-call-answers.js';

export interface McpServerOptions {
  readonly handler: ToolHandler;
  /** The Memory service the handler calls: where completion takes entry names from. */
  readonly memory: EntryNames;
  readonly policy: Pick<Policy, 'groups'>;
  readonly version: string;
  /**
   * Who is calling, given the MCP client's name (when it sent one) and the serving
   * context (authentication on HTTP). Decides whose memory and which history label.
   */
  readonly caller: (clientName: string | undefined, authInfo: unknown) => Caller;
  /** Where unexpected failures outside the tool handler (a name completion's) are reported. */
  readonly onUnexpectedError?: (error: unknown) => void;
}

/** From the 2025 `initialize` handshake, else from the 2026 per-request envelope. */
function clientNameOf(server: Server, envelope: Record<string, unknown> | undefined): string | undefined {
  const fromHandshake = server.getClientVersion()?.name;
  if (fromHandshake) return fromHandshake;
  const info = envelope?.[CLIENT_INFO_META_KEY] as { name?: unknown } | undefined;
  return typeof info?.name === 'string' ? info.name : undefined;
}

/** The JSON-RPC error for a tool that does not exist (tool-call-answers.ts), as the SDK's handlers throw it. */
function unknownToolError(name: unknown): ProtocolError {
  const { code, message } = unknownTool(name);
  return new ProtocolError(code, message);
}

export function createMcpServerFactory(options: McpServerOptions): McpServerFactory {
  const tools = mcpTools(options.policy);
  const resources = createMemoryResources(options.handler, options.memory, options.onUnexpectedError);
  return (context) => {
    const server = new Server(serverInfo(options.version), {
      capabilities: serverCapabilities(),
      instructions: SERVER_INSTRUCTIONS,
    });
    const callerOf = (envelope: Record<string, unknown> | undefined) =>
      options.caller(clientNameOf(server, envelope), context.authInfo);
    server.setRequestHandler('tools/list', async () => ({ tools }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name, arguments: args } = request.params;
      if (!isToolName(name)) throw unknownToolError(name);
      return callToolResult(await options.handler(callerOf(ctx.mcpReq.envelope), name, args));
    });
    server.setRequestHandler('resources/list', async () => ({ resources: [INDEX_RESOURCE] }));
    server.setRequestHandler('resources/templates/list', async () => ({
      resourceTemplates: [ENTRY_RESOURCE_TEMPLATE],
    }));
    server.setRequestHandler('resources/read', async (request, ctx) =>
      resources.read(callerOf(ctx.mcpReq.envelope), request.params.uri),
    );
    server.setRequestHandler('prompts/list', async () => ({ prompts: [...PROMPT_LIST] }));
    server.setRequestHandler('prompts/get', async (request) =>
      getPrompt(request.params.name, request.params.arguments),
    );
    server.setRequestHandler('completion/complete', async (request, ctx) => {
      const { ref, argument } = request.params;
      const names =
        ref.type === 'ref/resource'
          ? ref.uri === ENTRY_TEMPLATE && argument.name === 'name'
          : completesWithNames(ref.name, argument.name);
      if (!names) return { completion: { values: [] } };
      return resources.completeName(callerOf(ctx.mcpReq.envelope), argument.value);
    });
    return server;
  };
}
