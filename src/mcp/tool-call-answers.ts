/**
 * How `tools/call` is answered on every path that answers it (the SDK's server, the fast
 * paths of HTTP and stdio): a tool's result as the call's result, and the JSON-RPC error
 * for a tool that does not exist. Written without the SDK, so that the paths answering
 * before it is loaded (hot-request.ts) share them.
 */

import { TOOL_NAMES } from '../memory/tools/definitions.js';
import type { ToolResult } from '../memory/tools/handler.js';
import { JSON_RPC_ERROR } from './json-rpc-text.js';

/** The JSON-RPC error for a tool that does not exist: its code and message. */
export function unknownTool(name: unknown): { readonly code: number; readonly message: string } {
  return {
    code: JSON_RPC_ERROR.InvalidParams,
    message: `Unknown tool ${JSON.stringify(name)}. The tools are ${TOOL_NAMES.join(', ')}.`,
  };
}

/** A tool's result as the `tools/call` result. */
export function callToolResult(result: ToolResult) {
  return { content: [{ type: 'text' as const, text: result.text }], isError: result.isError };
}
