/**
 * The library: embed Engram in your own agent.
 *
 *   import { openApp, toolDefinitions, handleToolCall } from 'engram';
 *   const { memory } = await openApp({ backend: { kind: 'sqlite', path: 'memory.db' }, policy: { historyLimit: 20 } });
 *   // give toolDefinitions() to the model; for each tool call it makes:
 *   const { text, isError } = await handleToolCall(memory, call.name, call.arguments);
 *
 * openApp (or createApp, over a store of your own) wires every service over one store, as
 * the `engram` command does; createMemory and the stores below remain for the memory alone.
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
export {
  type AccessConfig,
  type App,
  type AppConfig,
  createApp,
  type OAuthServices,
  type OpenAppConfig,
  openApp,
} from './app.js';
export type { ActivityItem, ActivityPage, ActorCount, MemoryChange } from './memory/activity.js';
export { createMemory, Memory, type MemoryOptions } from './memory/memory.js';
export type { Caller } from './memory/model/caller.js';
export type { WriteRequest } from './memory/model/edit.js';
export { EngramError, type ErrorCode, isEngramError } from './memory/model/errors.js';
export { formatIndex, formatOpened, type IndexRow, indexLine } from './memory/model/format.js';
export { DEFAULT_GROUPS, DEFAULT_POLICY, type Policy } from './memory/model/policy.js';
export type { Store, StoredEntry } from './memory/port.js';
export type { RevisionDiff } from './memory/recovery.js';
export type { SearchHit, SearchSnippet } from './memory/search.js';
export { handleToolCall } from './memory/tools/call.js';
export {
  anthropicTools,
  mcpTools,
  type OpenAiTool,
  openAiTools,
  openAiTools as toolDefinitions,
} from './memory/tools/definitions.js';
export { createToolHandler, type ToolHandler, type ToolResult } from './memory/tools/handler.js';
export type { Backend, OpenOptions } from './open-store.js';
export { MemoryStore, openMemoryStore } from './storage/memory/index.js';
export { openPostgresStore, PostgresStore, type PostgresStoreOptions } from './storage/postgres/index.js';
export {
  backupBeforeUpgrade,
  openSqliteStore,
  type SqliteDriverName,
  SqliteStore,
  type SqliteStoreOptions,
  type UpgradeBackup,
} from './storage/sqlite/index.js';
export {
  createTransfer,
  type ExportDocument,
  type ExportOptions,
  type ImportOptions,
  type ImportReport,
  Transfer,
} from './transfer/transfer.js';
