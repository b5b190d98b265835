/**
 * The hot MCP requests — one `ping`, `tools/list` or `tools/call` in its simplest shape —
 * and their answers, written byte for byte as the SDK writes them, without loading it.
 * Shared by the fast paths of HTTP (fast-path.ts) and stdio (stdio-fast-path.ts), which
 * answer these straight from the tool handler and leave every other request to the SDK,
 * and by the stdio opening (stdio-opening.ts), which answers `tools/list` and `ping`
 * before the SDK is loaded.
 */

import type { Caller } from '../memory/memory.js';
import type { Policy } from '../memory/model/policy.js';
import { isToolName, mcpTools } from '../memory/tools/definitions.js';
import type { ToolHandler } from '../memory/tools/handler.js';
import { callToolResult, unknownTool } from './tool-call-answers.js';

export type RequestId = string | number;

export type HotRequest =
  | { readonly id: RequestId; readonly method: 'ping' | 'tools/list' }
  | { readonly id: RequestId; readonly method: 'tools/call'; readonly name: string; readonly args: unknown };

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function hasOnlyKeys(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  return Object.keys(value).every((key) => allowed.includes(key));
}

/** The request, when it is one a fast path answers exactly as the SDK would; else undefined. */
export function hotRequest(body: unknown): HotRequest | undefined {
  if (!isPlainObject(body) || !hasOnlyKeys(body, ['jsonrpc', 'id', 'method', 'params'])) return undefined;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== '2.0' || !(typeof id === 'string' || Number.isSafeInteger(id))) return undefined;
  const requestId = id as RequestId;
  if (method === 'ping' || method === 'tools/list') {
    const noParams = params === undefined || (isPlainObject(params) && Object.keys(params).length === 0);
    return noParams ? { id: requestId, method } : undefined;
  }
  if (method !== 'tools/call' || !isPlainObject(params) || !hasOnlyKeys(params, ['name', 'arguments'])) {
    return undefined;
  }
  const { name, arguments: args } = params;
  if (typeof name !== 'string' || !(args === undefined || isPlainObject(args))) return undefined;
  return { id: requestId, method, name, args };
}

/** A JSON-RPC success, its members in the SDK's order. */
export function resultMessage(id: RequestId, resultJson: string): string {
  return `{"result":${resultJson},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
}

/** A JSON-RPC error, its members in the SDK's order. */
function errorMessage(id: RequestId, error: { readonly code: number; readonly message: string }): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code: error.code, message: error.message } });
}

/** The `tools/list` result of a policy's tools, as JSON. */
export function toolListResult(policy: Pick<Policy, 'groups'>): string {
  return JSON.stringify({ tools: mcpTools(policy) });
}

/** Answers hot requests for a policy's tools: the JSON-RPC message, as the SDK would serialize it. */
export function createHotAnswerer(
  handler: ToolHandler,
  policy: Pick<Policy, 'groups'>,
): (request: HotRequest, caller: () => Caller) => Promise<string> {
  const toolList = toolListResult(policy);
  return async (request, caller) => {
    switch (request.method) {
      case 'ping':
        return resultMessage(request.id, '{}');
      case 'tools/list':
        return resultMessage(request.id, toolList);
      case 'tools/call': {
        if (!isToolName(request.name)) return errorMessage(request.id, unknownTool(request.name));
        const result = await handler(caller(), request.name, request.args);
        return resultMessage(request.id, JSON.stringify(callToolResult(result)));
      }
    }
  };
}
