/**
 * One tool call for an embedding agent, without a handler to keep: the library's
 * `handleToolCall` and the agent-loop adapters (src/adapters) share one handler per
 * Memory, so whichever door an agent uses, calls go through the same dispatch.
 */

import type { Memory } from '../memory.js';
import type { Caller } from '../model/caller.js';
import { createToolHandler, type ToolHandler, type ToolResult } from './handler.js';

/** Recorded in history as `agent`, in the local user's memory, unless the caller says otherwise. */
export const AGENT_CALLER: Caller = { user: 'local', label: 'agent' };

const handlers = new WeakMap<Memory, ToolHandler>();

/**
 * Runs one tool call (name and arguments as the model sent them: an object or a JSON
 * string) and returns the text for the model. Never throws; refusals have isError.
 * The caller defaults to the local user, recorded in history as `agent`.
 */
export function handleToolCall(
  memory: Memory,
  name: string,
  args: unknown,
  caller: Caller = AGENT_CALLER,
): Promise<ToolResult> {
  let handler = handlers.get(memory);
  if (!handler) {
    handler = createToolHandler(memory);
    handlers.set(memory, handler);
  }
  return handler(caller, name, args);
}
