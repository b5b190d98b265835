/**
 * What the agent-loop adapters share: whose memory a call acts on and who history
 * records, a way to be told of each memory call as it runs (`engram chat` shows them),
 * and the one path from a model's call to the tool handler.
 */

import type { Memory } from '../memory/memory.js';
import type { Caller } from '../memory/model/caller.js';
import { AGENT_CALLER, handleToolCall } from '../memory/tools/call.js';
import { isToolName, type ToolName } from '../memory/tools/definitions.js';
import type { ToolResult } from '../memory/tools/handler.js';

/** One memory call an adapter ran: the tool, the arguments as the model sent them, the result. */
export interface MemoryCall {
  readonly name: ToolName;
  readonly arguments: unknown;
  readonly result: ToolResult;
}

export interface AdapterOptions {
  /** Whose memory, and the label history records; the local user as `agent` by default. */
  readonly caller?: Caller;
  /** Told of each memory call once it has run, in order. */
  readonly onCall?: (call: MemoryCall) => void;
}

/** Whether a tool name is one of Engram's: the calls of other tools are the caller's to run. */
export function isMemoryTool(name: unknown): name is ToolName {
  return isToolName(name);
}

export async function runMemoryCall(
  memory: Memory,
  name: ToolName,
  args: unknown,
  options: AdapterOptions,
): Promise<ToolResult> {
  const result = await handleToolCall(memory, name, args, options.caller ?? AGENT_CALLER);
  options.onCall?.({ name, arguments: args, result });
  return result;
}
