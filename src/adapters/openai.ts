/**
 * The OpenAI chat completions agent loop: the `tool_calls` of an assistant message in,
 * the `tool` role messages to send back out. Calls of tools that are not Engram's are
 * handed back untouched, so Engram's tools mix with the agent's own. The tools to offer
 * the model are `openAiTools(memory.policy)` (alias `toolDefinitions`).
 */

import type { Memory } from '../memory/memory.js';
import { type AdapterOptions, isMemoryTool, runMemoryCall } from './calls.js';

/** A tool call of an assistant message, as chat completions send it (arguments a JSON string). */
export interface OpenAiToolCall {
  readonly id: string;
  readonly type?: string;
  readonly function?: { readonly name?: string; readonly arguments?: string };
}

/** The answer to one tool call, for the next request's messages. */
export interface OpenAiToolMessage {
  readonly role: 'tool';
  readonly tool_call_id: string;
  readonly content: string;
}

export interface OpenAiToolCallResults {
  /** One tool message per Engram call, in the order of the calls. */
  readonly messages: OpenAiToolMessage[];
  /** The calls of other tools, left for the caller to answer. */
  readonly unhandled: OpenAiToolCall[];
}

/**
 * Runs the Engram calls of an assistant message, one after another in the order the
 * model made them (a write then an open reads what was written), and returns their tool
 * messages. Never throws: bad arguments, malformed JSON included, and refusals become a
 * message the model can act on.
 */
export async function openAiToolMessages(
  memory: Memory,
  message: { readonly tool_calls?: readonly OpenAiToolCall[] | null | undefined },
  options: AdapterOptions = {},
): Promise<OpenAiToolCallResults> {
  const messages: OpenAiToolMessage[] = [];
  const unhandled: OpenAiToolCall[] = [];
  for (const call of message.tool_calls ?? []) {
    const name = call.function?.name;
    if ((call.type !== undefined && call.type !== 'function') || !isMemoryTool(name)) {
      unhandled.push(call);
      continue;
    }
    const result = await runMemoryCall(memory, name, call.function?.arguments, options);
    messages.push({ role: 'tool', tool_call_id: call.id, content: result.text });
  }
  return { messages, unhandled };
}
