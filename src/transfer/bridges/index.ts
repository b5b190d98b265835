/**
 * The importers from other memory systems, by the kind `engram import --from KIND` names:
 * each reads the files it is given into an import plan (plan.ts), and says how an entry
 * that exists already is met — a Markdown export is Engram's own, so it conflicts as an
 * export document does; a foreign memory adds to what exists.
 */

import type { Policy } from '../../memory/model/policy.js';
import { anthropicMemorySteps } from './anthropic-memory.js';
import { chatgptSteps } from './chatgpt.js';
import { CLAUDE_CODE_INDEX, claudeCodeSteps } from './claude-code.js';
import { llamaWebuiSteps, readLlamaWebui } from './llama-webui.js';
import { markdownSteps } from './markdown.js';
import type { ImportFile, ImportPlan, PlanOptions } from './plan.js';
import { serverMemorySteps } from './server-memory.js';
import type { Steps } from './steps.js';

export interface BridgeOptions extends PlanOptions {
  /** server-memory: entity type → group, over the defaults. */
  readonly map?: Readonly<Record<string, string>>;
  /** chatgpt: the entry the memories go to; claude-code: the entry MEMORY.md becomes. */
  readonly name?: string;
}

export interface Bridge {
  /** What the source is, for help texts. */
  readonly summary: string;
  /** Whether the source is a folder (else one file). */
  readonly folder: boolean;
  /** A folder bridge may also be named by this file in the folder (its index): the folder is read. */
  readonly indexFile?: string;
  /** An entry that exists already: appended to (foreign memories) or a conflict (Engram's own files). */
  readonly existing: 'append' | 'conflict';
  /** Reads the files into a plan, a step at a time (steps.ts): run whole, or with pauses by a server. */
  steps(files: readonly ImportFile[], policy: Policy, options: BridgeOptions): Steps<ImportPlan>;
  /**
   * The same plan read a slice at a time, `pause` awaited between slices, for a kind whose
   * one file can be large enough to hold the event loop when parsed whole (JSON.parse of it).
   */
  read?(
    files: readonly ImportFile[],
    policy: Policy,
    options: BridgeOptions,
    pause: () => Promise<void>,
  ): Promise<ImportPlan>;
}

/** The kinds, in the order help lists them. */
export const BRIDGE_KINDS = [
  'markdown',
  'server-memory',
  'anthropic-memory',
  'claude-code',
  'chatgpt',
  'llama-webui',
] as const;

export type BridgeKind = (typeof BRIDGE_KINDS)[number];

export const BRIDGES: Readonly<Record<BridgeKind, Bridge>> = {
  markdown: {
    summary: 'a folder of group/slug.md files (what engram export --format markdown writes)',
    folder: true,
    existing: 'conflict',
    steps: markdownSteps,
  },
  'server-memory': {
    summary: 'memory.jsonl of the MCP memory server (@modelcontextprotocol/server-memory)',
    folder: false,
    existing: 'append',
    steps: serverMemorySteps,
  },
  'anthropic-memory': {
    summary: 'a Claude memory-tool /memories folder: each file an entry',
    folder: true,
    existing: 'append',
    steps: anthropicMemorySteps,
  },
  'claude-code': {
    summary: 'a Claude Code memory folder (~/.claude/projects/<project>/memory) or its MEMORY.md',
    folder: true,
    indexFile: CLAUDE_CODE_INDEX,
    existing: 'append',
    steps: claudeCodeSteps,
  },
  chatgpt: {
    summary: 'ChatGPT\'s "Manage memories" list pasted into a text file ("-": stdin), into one entry (--name)',
    folder: false,
    existing: 'append',
    steps: chatgptSteps,
  },
  'llama-webui': {
    summary: "the llama.cpp WebUI's memory export (llama_memory_DATE.json: settings, Memory, Export memory)",
    folder: false,
    existing: 'append',
    steps: llamaWebuiSteps,
    read: readLlamaWebui,
  },
};
