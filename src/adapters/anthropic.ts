/**
 * The Anthropic Messages API agent loop: the `tool_use` blocks of an assistant message
 * in, the `tool_result` blocks for the next user message out (`is_error` on refusals).
 * Blocks of tools that are not Engram's are handed back untouched, so Engram's tools mix
 * with the agent's own. The tools to offer the model are `anthropicTools(memory.policy)`.
 */

import type { Memory } from '../memory/memory.js';
import { type AdapterOptions, isMemoryTool, runMemoryCall } from './calls.js';

/** A tool_use block of an assistant message (input already an object). */
export interface AnthropicToolUse {
  readonly type: 'tool_use';
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
}

/** The answer to one tool_use, for the content of the next user message. */
export interface AnthropicToolResult {
  readonly type: 'tool_result';
  readonly tool_use_id: string;
  readonly content: string;
  readonly is_error?: true;
}

export interface AnthropicToolResults {
  /** One tool_result per Engram tool_use, in the order of the blocks. */
  readonly results: AnthropicToolResult[];
  /** The tool_use blocks of other tools, left for the caller to answer. */
  readonly unhandled: AnthropicToolUse[];
}

function isToolUse(block: { readonly type: string }): block is AnthropicToolUse {
  return block.type === 'tool_use';
}

/**
 * Runs the Engram tool_use blocks of an assistant message, one after another in order,
 * and returns their tool_result blocks. Never throws: bad input and refusals become a
 * result with is_error and a message the model can act on.
 */
export async function anthropicToolResults(
  memory: Memory,
  message: { readonly content: string | readonly { readonly type: string }[] },
  options: AdapterOptions = {},
): Promise<AnthropicToolResults> {
  const results: AnthropicToolResult[] = [];
  const unhandled: AnthropicToolUse[] = [];
  const blocks = typeof message.content === 'string' ? [] : message.content;
  for (const block of blocks.filter(isToolUse)) {
    if (!isMemoryTool(block.name)) {
      unhandled.push(block);
      continue;
    }
    const result = await runMemoryCall(memory, block.name, block.input, options);
    results.push({
      type: 'tool_result',
      tool_use_id: block.id,
      content: result.text,
      ...(result.isError ? { is_error: true as const } : {}),
    });
  }
  return { results, unhandled };
}
