/**
 * The Anthropic Messages API adapter in an agent loop, against a scripted endpoint
 * replaying recorded turns: the memory's tool_use blocks become tool_result blocks
 * (is_error on a refusal), another tool's block is left to the agent, and the memory
 * holds what was written.
 */

import { describe, expect, it } from 'vitest';
import {
  type AnthropicToolResult,
  type AnthropicToolUse,
  anthropicToolResults,
  anthropicTools,
  createMemory,
  openMemoryStore,
} from '../../src/index.js';
import { jsonReply, scriptedEndpoint } from '../helpers/scripted-endpoint.js';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url);

interface Message {
  readonly role: 'assistant';
  readonly content: { readonly type: string; readonly text?: string }[];
  readonly stop_reason: string;
}

async function create(url: string, body: unknown): Promise<Message> {
  const response = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'test' },
    body: JSON.stringify(body),
  });
  const { role, content, stop_reason } = (await response.json()) as Message;
  return { role, content, stop_reason };
}

describe('anthropicToolResults', () => {
  it('answers the memory tool_use blocks with tool_result blocks and leaves the others to the agent', async () => {
    const endpoint = await scriptedEndpoint([
      jsonReply(fixture('anthropic-tool-use.json')),
      jsonReply(fixture('anthropic-answer.json')),
    ]);
    const memory = createMemory({ store: openMemoryStore() });
    const tools = [...anthropicTools(memory.policy), { name: 'get_time', input_schema: { type: 'object' } }];
    const messages: unknown[] = [{ role: 'user', content: 'I moved from Vim to Helix, tabs of width 4.' }];

    let message = await create(endpoint.url, { model: 'claude-sonnet-4-5', max_tokens: 1024, messages, tools });
    while (message.stop_reason === 'tool_use') {
      messages.push(message);
      const { results, unhandled } = await anthropicToolResults(memory, message);
      const own: AnthropicToolResult[] = unhandled.map((block) => ({
        type: 'tool_result',
        tool_use_id: block.id,
        content: '10:42',
      }));
      messages.push({ role: 'user', content: [...results, ...own] });
      message = await create(endpoint.url, { model: 'claude-sonnet-4-5', max_tokens: 1024, messages, tools });
    }

    expect(message.content[0]?.text).toBe(
      'Saved: you use Helix with tabs of width 4. I had nothing about a Vim config to forget.',
    );
    expect(endpoint.body<{ tools: unknown[] }>(0).tools.slice(0, 3)).toEqual(anthropicTools());
    const sent = endpoint.body<{ messages: { content: AnthropicToolResult[] }[] }>(1).messages[2];
    expect(sent?.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_01A09q90qw90lq917835lq9',
        content: 'topics/editor (29 bytes): Editor preferences',
      },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
        content: expect.stringContaining('topics/vim-config'),
        is_error: true,
      },
      { type: 'tool_result', tool_use_id: 'toolu_019Ji2hGcSqbvJ7dcSVpxkkQ', content: '10:42' },
    ]);
    const { found } = await memory.open({ user: 'local', label: 'check' }, ['topics/editor']);
    expect(found[0]?.body).toBe('Uses Helix, tabs of width 4.\n');
  });

  it('finds nothing to run in a message of text alone', async () => {
    const memory = createMemory({ store: openMemoryStore() });
    expect(await anthropicToolResults(memory, { content: 'Hello.' })).toEqual({ results: [], unhandled: [] });
    const text: { type: string; text: string }[] = [{ type: 'text', text: 'Hello.' }];
    expect(await anthropicToolResults(memory, { content: text })).toEqual({
      results: [],
      unhandled: [],
    });
  });

  it('answers input of the wrong shape with an error the model can act on', async () => {
    const memory = createMemory({ store: openMemoryStore() });
    const content: AnthropicToolUse[] = [
      { type: 'tool_use', id: 'toolu_1', name: 'memory_write', input: { name: 'topics/x', new: 5 } },
    ];
    const { results } = await anthropicToolResults(memory, { content });
    expect(results).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: expect.stringContaining('memory_write: new must be a string'),
        is_error: true,
      },
    ]);
  });
});
