/**
 * The library: embed Engram in your own agent.
 *
 *   import { createMemory, openSqliteStore, toolDefinitions, handleToolCall } from 'engram';
 *   const memory = createMemory({ store: openSqliteStore({ path: 'memory.db' }), policy: { historyLimit: 20 } });
 *   // give toolDefinitions() to the model; for each tool call it makes:
 *   const { text, isError } = await handleToolCall(memory, call.name, call.arguments);
 *
 * The Memory service owns every rule and the clock: the policy given here holds on any
 * store. Nothing here reads the environment (the `engram` command does, in src/cli).
 * In an OpenAI or Anthropic agent loop, `openAiToolMessages` / `anthropicToolResults`
 * answer a whole assistant message's memory calls; `engram/ai-sdk` has the tools for the
 * Vercel AI SDK. A backend of your own implements the port of `engram/store` and is
 * tested with `engram/testing`.
 */

export {
  type AnthropicToolResult,
  type AnthropicToolResults,
  type AnthropicToolUse,
  anthropicToolResults,
} from './adapters/anthropic.js';
export { type AdapterOptions, isMemoryTool, type MemoryCall } from './adapters/calls.js';
export {
  type OpenAiToolCall,
  type OpenAiToolCallResults,
  type OpenAiToolMessage,
  openAiToolMessages,
} from './adapters/openai.js';
export type { ActivityItem, ActivityPage, ActorCount, MemoryChange } from './core/activity.js';
export type { Caller } from './core/caller.js';
export type { WriteRequest } from './core/edit.js';
export { EngramError, type ErrorCode, isEngramError } from './core/errors.js';
export { formatIndex, formatOpened, type IndexRow, indexLine } from './core/format.js';
export type { RevisionDiff } from './core/history.js';
export { createMemory, Memory, type MemoryOptions } from './core/memory.js';
export { DEFAULT_GROUPS, DEFAULT_POLICY, type Policy } from './core/policy.js';
export type { SearchHit, SearchSnippet } from './core/search.js';
export type { Store, StoredEntry } from './core/store.js';
export { MemoryStore, openMemoryStore } from './store/memory/index.js';
export { openPostgresStore, PostgresStore, type PostgresStoreOptions } from './store/postgres/index.js';
export { openSqliteStore, SqliteStore, type SqliteStoreOptions } from './store/sqlite/index.js';
export { handleToolCall } from './tools/call.js';
export {
  anthropicTools,
  mcpTools,
  type OpenAiTool,
  openAiTools,
  openAiTools as toolDefinitions,
} from './tools/definitions.js';
export { createToolHandler, type ToolHandler, type ToolResult } from './tools/handler.js';
