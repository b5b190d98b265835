/**
 * The three tool definitions, from spec/tools.json — the user's own words and the
 * contract with every model. With the default groups they are served exactly as the
 * spec has them; with configured groups only the sentence of memory_write's description
 * that lists the groups is written anew from the configuration.
 */

import { readFileSync } from 'node:fs';
import { DEFAULT_GROUPS, type Policy } from '../model/policy.js';
import { TOOLS_SPEC_URL } from '../spec-file.js';

export type ToolName = 'memory_open' | 'memory_write' | 'memory_drop';
export const TOOL_NAMES: readonly ToolName[] = ['memory_open', 'memory_write', 'memory_drop'];

export interface JsonSchemaObject {
  readonly type: 'object';
  readonly [key: string]: unknown;
}

/** OpenAI function-calling shape, as in the spec file. */
export interface OpenAiTool {
  readonly type: 'function';
  readonly function: { readonly name: ToolName; readonly description: string; readonly parameters: JsonSchemaObject };
}

const SPEC: readonly OpenAiTool[] = Object.freeze(JSON.parse(readFileSync(TOOLS_SPEC_URL, 'utf8')) as OpenAiTool[]);

/** "areas for ongoing projects, people for …, topics for …" — the sentence groups rewrite. */
export function groupSentence(groups: Readonly<Record<string, string>>): string {
  const parts = Object.entries(groups).map(([group, purpose]) => `${group} for ${purpose}`);
  return `Name is <group>/<slug>: ${parts.join(', ')}.`;
}

const DEFAULT_SENTENCE = groupSentence(DEFAULT_GROUPS);

function withGroups(tool: OpenAiTool, groups: Readonly<Record<string, string>>): OpenAiTool {
  if (tool.function.name !== 'memory_write') return tool;
  const { description } = tool.function;
  if (!description.includes(DEFAULT_SENTENCE)) {
    throw new Error(`spec/tools.json: memory_write's description no longer contains "${DEFAULT_SENTENCE}"`);
  }
  return {
    ...tool,
    function: { ...tool.function, description: description.replace(DEFAULT_SENTENCE, () => groupSentence(groups)) },
  };
}

/** The tools in OpenAI function-calling format (the spec's own shape); a fresh copy each call. */
export function openAiTools(policy: Pick<Policy, 'groups'> = { groups: DEFAULT_GROUPS }): OpenAiTool[] {
  return SPEC.map((tool) => withGroups(structuredClone(tool), policy.groups));
}

/** The tools in Anthropic Messages API format. */
export function anthropicTools(policy?: Pick<Policy, 'groups'>) {
  return openAiTools(policy).map(({ function: f }) => ({
    name: f.name,
    description: f.description,
    input_schema: f.parameters,
  }));
}

const ANNOTATIONS: Readonly<Record<ToolName, Record<string, boolean>>> = {
  memory_open: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  memory_write: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  memory_drop: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};

/** The tools in MCP `tools/list` format, with annotations. */
export function mcpTools(policy?: Pick<Policy, 'groups'>) {
  return openAiTools(policy).map(({ function: f }) => ({
    name: f.name,
    description: f.description,
    inputSchema: f.parameters,
    annotations: ANNOTATIONS[f.name],
  }));
}

export function isToolName(value: unknown): value is ToolName {
  return typeof value === 'string' && (TOOL_NAMES as readonly string[]).includes(value);
}
