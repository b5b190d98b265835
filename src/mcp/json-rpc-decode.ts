/**
 * One JSON-RPC message from a client's text, for the transports that carry one message
 * per unit (a line on stdio, a message on a WebSocket): the nesting is checked before the
 * text is parsed (json-nesting.ts), then the JSON, then the JSON-RPC shape. A text that
 * fails is answered with the JSON-RPC error its refusal names (id null: its id cannot be
 * read), never dropped in silence, and the connection goes on.
 */

import { type JSONRPCMessage, ProtocolErrorCode, parseJSONRPCMessage } from '@modelcontextprotocol/server';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-nesting.js';

/** Why a text was refused: the JSON-RPC error it is answered with. */
export interface Refusal {
  readonly code: ProtocolErrorCode;
  readonly message: string;
}

/** What the transport calls one unit of text, in its refusals' words. */
export type Unit = 'line' | 'message';

/** The message a text carries (and its JSON as written, before the SDK's parsing), or why it is refused. */
export function decodeMessage(
  text: string,
  unit: Unit,
): { readonly message: JSONRPCMessage; readonly json: unknown } | Refusal {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    return {
      code: ProtocolErrorCode.InvalidRequest,
      message: `Invalid request: the JSON is nested more than ${MAX_JSON_DEPTH} levels deep.`,
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { code: ProtocolErrorCode.ParseError, message: `Parse error: the ${unit} is not valid JSON.` };
  }
  try {
    return { message: parseJSONRPCMessage(json), json };
  } catch {
    return {
      code: ProtocolErrorCode.InvalidRequest,
      message: `Invalid request: the ${unit} is JSON but not a JSON-RPC 2.0 message.`,
    };
  }
}

/** The JSON-RPC error answering a refused text. */
export function refusalAnswer({ code, message }: Refusal): string {
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
}
