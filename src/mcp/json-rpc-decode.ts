/**
 * One JSON-RPC message from a client's text, for the transports that carry one message
 * per unit (a line on stdio, a message on a WebSocket): the nesting is checked before the
 * text is parsed (json/json-nesting.ts), then the JSON, then the JSON-RPC shape. A text that
 * fails is answered with the JSON-RPC error its refusal names (id null: its id cannot be
 * read), never dropped in silence, and the connection goes on.
 */

import { type JSONRPCMessage, ProtocolErrorCode, parseJSONRPCMessage } from '@modelcontextprotocol/server';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json/json-nesting.js';

/** Why a text was refused: the JSON-RPC error it is answered with. */
export interface Refusal {
  readonly code: ProtocolErrorCode;
  readonly message: string;
}

/** What the transport calls one unit of text, in its refusals' words. */
export type Unit = 'line' | 'message';

/**
 * The JSON a text carries, nesting checked first, or why it is refused. The first half of
 * decodeMessage, for a transport that can answer some messages from the JSON alone (the
 * stdio fast path) without the SDK's parsing.
 */
export function parseText(text: string, unit: Unit): { readonly json: unknown } | Refusal {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    return {
      code: ProtocolErrorCode.InvalidRequest,
      message: `Invalid request: the JSON is nested more than ${MAX_JSON_DEPTH} levels deep.`,
    };
  }
  try {
    return { json: JSON.parse(text) };
  } catch {
    return { code: ProtocolErrorCode.ParseError, message: `Parse error: the ${unit} is not valid JSON.` };
  }
}

/** The JSON-RPC message `json` is, by the SDK's parsing, or why it is refused. The second half of decodeMessage. */
export function parseMessage(json: unknown, unit: Unit): { readonly message: JSONRPCMessage } | Refusal {
  try {
    return { message: parseJSONRPCMessage(json) };
  } catch {
    return {
      code: ProtocolErrorCode.InvalidRequest,
      message: `Invalid request: the ${unit} is JSON but not a JSON-RPC 2.0 message.`,
    };
  }
}

/** The message a text carries, or why it is refused. */
export function decodeMessage(text: string, unit: Unit): { readonly message: JSONRPCMessage } | Refusal {
  const parsed = parseText(text, unit);
  return 'code' in parsed ? parsed : parseMessage(parsed.json, unit);
}

/** The JSON-RPC error answering a refused text. */
export function refusalAnswer({ code, message }: Refusal): string {
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
}
