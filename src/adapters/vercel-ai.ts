/**
 * The three tools for the Vercel AI SDK (`ai`, versions 6 and 7), published as
 * `engram/ai-sdk` so that only an agent that imports it loads `ai`, an optional peer
 * dependency. Each tool runs through the same handler as every other door; a refusal
 * reaches the model as error text, and the app sees the whole result (text, isError, code).
 *
 *   const result = await generateText({ model, tools: aiSdkTools(memory), stopWhen: stepCountIs(8), prompt });
 */

import { type JSONSchema7, jsonSchema, type Tool, tool } from 'ai';
import type { Memory } from '../memory/memory.js';
import { openAiTools, type ToolName } from '../memory/tools/definitions.js';
import type { ToolResult } from '../memory/tools/handler.js';
import { type AdapterOptions, runMemoryCall } from './calls.js';

export type { AdapterOptions, MemoryCall } from './calls.js';

/** One Engram tool as the AI SDK takes it: the model's input object in, the tool result out. */
export type AiSdkTool = Tool<Record<string, unknown>, ToolResult>;

/** memory_open, memory_write and memory_drop, with the memory's groups in memory_write's description. */
export function aiSdkTools(memory: Memory, options: AdapterOptions = {}): Record<ToolName, AiSdkTool> {
  const entries = openAiTools(memory.policy).map(({ function: definition }): [ToolName, AiSdkTool] => [
    definition.name,
    tool<Record<string, unknown>, ToolResult>({
      description: definition.description,
      inputSchema: jsonSchema<Record<string, unknown>>(definition.parameters as JSONSchema7),
      execute: (input) => runMemoryCall(memory, definition.name, input, options),
      toModelOutput: ({ output }) => ({ type: output.isError ? 'error-text' : 'text', value: output.text }),
    }),
  ]);
  return Object.fromEntries(entries) as Record<ToolName, AiSdkTool>;
}
