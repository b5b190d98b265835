/**
 * The JSON a client's text carries, before any MCP SDK code runs: the nesting checked
 * first (json/json-nesting.ts), then the JSON parsed; a text that fails is refused with
 * the JSON-RPC error its refusal names. Kept apart from the SDK's parsing
 * (json-rpc-decode.ts) so that `engram stdio` can read and answer the opening of a
 * connection (stdio-opening.ts) before the SDK, a megabyte of code, has been loaded.
 */

import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json/json-nesting.js';

/**
 * The JSON-RPC error codes answered without the SDK, equal to its ProtocolErrorCode
 * members of the same names (test/mcp/stdio-opening.test.ts holds them to it).
 */
export const JSON_RPC_ERROR = {
  ParseError: -32700,
  InvalidRequest: -32600,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;

/** Why a text was refused: the JSON-RPC error it is answered with. */
export interface Refusal {
  readonly code: number;
  readonly message: string;
}

/** What the transport calls one unit of text, in its refusals' words. */
export type Unit = 'line' | 'message';

/** The SDK's parsing of a JSON-RPC message (json-rpc-decode.ts, parseMessage), for a transport that must not load it. */
export type ParseMessage = (json: unknown, unit: Unit) => { readonly message: JSONRPCMessage } | Refusal;

/**
 * The JSON a text carries, nesting checked first, or why it is refused. The first half of
 * decodeMessage (json-rpc-decode.ts), for a transport that can answer some messages from
 * the JSON alone (the stdio opening and fast path) without the SDK's parsing.
 */
export function parseText(text: string, unit: Unit): { readonly json: unknown } | Refusal {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    return {
      code: JSON_RPC_ERROR.InvalidRequest,
      message: `Invalid request: the JSON is nested more than ${MAX_JSON_DEPTH} levels deep.`,
    };
  }
  try {
    return { json: JSON.parse(text) };
  } catch {
    return { code: JSON_RPC_ERROR.ParseError, message: `Parse error: the ${unit} is not valid JSON.` };
  }
}

/** The JSON-RPC error answering a refused text. */
export function refusalAnswer({ code, message }: Refusal): string {
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
}
