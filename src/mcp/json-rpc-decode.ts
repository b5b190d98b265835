/**
 * One JSON-RPC message from a client's text, for the transports that carry one message
 * per unit (a line on stdio, a message on a WebSocket): the text's JSON (json-rpc-text.ts),
 * then the JSON-RPC shape by the SDK's parsing. A text that fails is answered with the
 * JSON-RPC error its refusal names (id null: its id cannot be read), never dropped in
 * silence, and the connection goes on.
 */

import { type JSONRPCMessage, parseJSONRPCMessage } from '@modelcontextprotocol/server';
import { JSON_RPC_ERROR, parseText, type Refusal, type Unit } from './json-rpc-text.js';

/** The JSON-RPC message `json` is, by the SDK's parsing, or why it is refused. The second half of decodeMessage. */
export function parseMessage(json: unknown, unit: Unit): { readonly message: JSONRPCMessage } | Refusal {
  try {
    return { message: parseJSONRPCMessage(json) };
  } catch {
    return {
      code: JSON_RPC_ERROR.InvalidRequest,
      message: `Invalid request: the ${unit} is JSON but not a JSON-RPC 2.0 message.`,
    };
  }
}

/** The message a text carries, or why it is refused. */
export function decodeMessage(text: string, unit: Unit): { readonly message: JSONRPCMessage } | Refusal {
  const parsed = parseText(text, unit);
  return 'code' in parsed ? parsed : parseMessage(parsed.json, unit);
}
