/**
 * The tool definitions are the contract with every model: served verbatim from the
 * spec with the default groups, only the group sentence rewritten for configured
 * groups, in OpenAI, Anthropic and MCP shapes.
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_GROUPS } from '../../../src/memory/model/policy.js';
import {
  anthropicTools,
  groupSentence,
  isToolName,
  mcpTools,
  openAiTools,
} from '../../../src/memory/tools/definitions.js';

/** The project's copy of the spec. `npm run check-spec` checks it against the user's original, outside the repo. */
const PROJECT_SPEC = fileURLToPath(new URL('../../../spec/tools.json', import.meta.url));

const spec = JSON.parse(readFileSync(PROJECT_SPEC, 'utf8'));
const DEFAULT_SENTENCE =
  'Name is <group>/<slug>: areas for ongoing projects, people for the ones the user works with, topics for lasting facts about them.';

describe('the spec', () => {
  it('openAiTools() deep-equals the project spec, also with the default groups passed explicitly', () => {
    expect(openAiTools()).toEqual(spec);
    expect(openAiTools({ groups: DEFAULT_GROUPS })).toEqual(spec);
  });

  it('the default group sentence is the one in the spec', () => {
    expect(groupSentence(DEFAULT_GROUPS)).toBe(DEFAULT_SENTENCE);
    expect(spec[1].function.description).toContain(DEFAULT_SENTENCE);
  });

  it('a caller changing the definitions it got does not change the next ones', () => {
    const tools = openAiTools();
    for (const tool of tools) {
      (tool.function as { description: string }).description = 'changed';
      (tool.function.parameters as Record<string, unknown>).strict = true;
    }
    expect(openAiTools()).toEqual(spec);
  });
});

describe('configured groups', () => {
  const groups = { work: 'the job', home: 'the house and family' };

  it('change only the group sentence of memory_write', () => {
    const expected = structuredClone(spec);
    expected[1].function.description = spec[1].function.description.replace(
      DEFAULT_SENTENCE,
      'Name is <group>/<slug>: work for the job, home for the house and family.',
    );
    expect(openAiTools({ groups })).toEqual(expected);
  });

  it('are put in literally, $ patterns included', () => {
    const description = openAiTools({ groups: { odd: "costs $& and $' and $$" } })[1]?.function.description;
    expect(description).toContain("Name is <group>/<slug>: odd for costs $& and $' and $$.");
  });
});

describe('shapes', () => {
  it('Anthropic: name, description, input_schema', () => {
    expect(anthropicTools()).toEqual(
      spec.map((tool: { function: { name: string; description: string; parameters: unknown } }) => ({
        name: tool.function.name,
        description: tool.function.description,
        input_schema: tool.function.parameters,
      })),
    );
  });

  it('MCP: name, description, inputSchema and annotations', () => {
    const tools = mcpTools();
    expect(tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }))).toEqual(
      spec.map((tool: { function: { name: string; description: string; parameters: unknown } }) => ({
        name: tool.function.name,
        description: tool.function.description,
        inputSchema: tool.function.parameters,
      })),
    );
    const annotations = Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations]));
    expect(annotations.memory_open).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(annotations.memory_write).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(annotations.memory_drop).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it('Anthropic and MCP follow configured groups too', () => {
    const groups = { work: 'the job' };
    expect(anthropicTools({ groups })[1]?.description).toContain('Name is <group>/<slug>: work for the job.');
    expect(mcpTools({ groups })[1]?.description).toContain('Name is <group>/<slug>: work for the job.');
  });

  it('isToolName knows the three tools', () => {
    expect(['memory_open', 'memory_write', 'memory_drop'].every(isToolName)).toBe(true);
    expect(isToolName('memory_read')).toBe(false);
    expect(isToolName(undefined)).toBe(false);
  });
});
