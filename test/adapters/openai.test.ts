/**
 * The OpenAI chat completions adapter in an agent loop, against a scripted endpoint
 * replaying recorded turns: the model's memory calls become tool messages (a malformed
 * JSON argument included, as an error the model can fix), another tool's call is left
 * to the agent, and the memory holds what was written, recorded under the caller's label.
 */

import { describe, expect, it } from 'vitest';
import {
  createMemory,
  type MemoryCall,
  type OpenAiToolCall,
  type OpenAiToolMessage,
  openAiToolMessages,
  openAiTools,
  openMemoryStore,
} from '../../src/index.js';
import { jsonReply, scriptedEndpoint } from '../helpers/scripted-endpoint.js';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url);

interface AssistantMessage {
  readonly role: 'assistant';
  readonly content: string | null;
  readonly tool_calls?: OpenAiToolCall[];
}

interface Completion {
  readonly choices: readonly { readonly message: AssistantMessage }[];
}

async function complete(url: string, body: unknown): Promise<Completion> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await response.json()) as Completion;
}

describe('openAiToolMessages', () => {
  it('answers the memory calls of an assistant message with tool messages and leaves the others to the agent', async () => {
    const endpoint = await scriptedEndpoint([
      jsonReply(fixture('openai-tool-calls.json')),
      jsonReply(fixture('openai-answer.json')),
    ]);
    const memory = createMemory({ store: openMemoryStore() });
    const tools = [
      ...openAiTools(memory.policy),
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
    ];
    const messages: unknown[] = [{ role: 'user', content: 'I take green tea, no sugar, at 80 °C. Weather in Lisbon?' }];
    const calls: MemoryCall[] = [];

    // The agent loop: ask, answer the tool calls, ask again until the model answers.
    let answer: string | null = null;
    for (let round = 0; round < 4 && answer === null; round++) {
      const [choice] = (await complete(endpoint.url, { model: 'gpt-4.1', messages, tools })).choices;
      if (!choice) throw new Error('no choice in the completion');
      const { message } = choice;
      messages.push(message);
      if (!message.tool_calls?.length) {
        answer = message.content;
        break;
      }
      const { messages: results, unhandled } = await openAiToolMessages(memory, message, {
        caller: { user: 'local', label: 'my-agent' },
        onCall: (call) => calls.push(call),
      });
      const own: OpenAiToolMessage[] = unhandled.map((call) => ({
        role: 'tool',
        tool_call_id: call.id,
        content: `Sunny in Lisbon (${call.function?.name})`,
      }));
      messages.push(...results, ...own);
    }

    expect(answer).toBe('Noted: green tea, no sugar, at about 80 °C. It is sunny in Lisbon today.');
    // The tools went out in OpenAI's shape, the spec's own.
    expect(endpoint.body<{ tools: unknown[] }>(0).tools.slice(0, 3)).toEqual(openAiTools());
    // The second request carries one tool message per call, in the order of the calls.
    const sent = endpoint.body<{ messages: OpenAiToolMessage[] }>(1).messages.slice(2);
    expect(sent).toEqual([
      {
        role: 'tool',
        tool_call_id: 'call_Qm3Hn8vXk2LpR5tYw9Zb1cDe',
        content: 'topics/tea (35 bytes): How the user takes their tea',
      },
      {
        role: 'tool',
        tool_call_id: 'call_Ab4Cd7Ef0Gh3Ij6Kl9Mn2OpQ',
        content: expect.stringContaining('memory_open arguments are not valid JSON. Send an object such as'),
      },
      { role: 'tool', tool_call_id: 'call_Vt6Jk1sNw4QxM8pLz2Rf7gHa', content: 'Sunny in Lisbon (get_weather)' },
    ]);
    expect(calls.map(({ name, result }) => [name, result.isError, result.code])).toEqual([
      ['memory_write', false, undefined],
      ['memory_open', true, 'INVALID_ARGUMENT'],
    ]);

    const caller = { user: 'local', label: 'check' };
    const { found } = await memory.open(caller, ['topics/tea']);
    expect(found[0]?.body).toBe('Green tea, no sugar, about 80 °C.\n');
    expect((await memory.recovery.history(caller, 'topics/tea')).map((revision) => revision.actor)).toEqual([
      'my-agent',
    ]);
  });

  it('leaves a message without tool calls, and calls of other kinds, alone', async () => {
    const memory = createMemory({ store: openMemoryStore() });
    expect(await openAiToolMessages(memory, { tool_calls: null })).toEqual({ messages: [], unhandled: [] });
    const custom = { id: 'call_1', type: 'custom', function: { name: 'memory_open', arguments: '{}' } };
    expect(await openAiToolMessages(memory, { tool_calls: [custom] })).toEqual({ messages: [], unhandled: [custom] });
  });

  it('records the calls as the agent in the local memory unless told otherwise, and never throws on odd arguments', async () => {
    const memory = createMemory({ store: openMemoryStore() });
    const { messages } = await openAiToolMessages(memory, {
      tool_calls: [
        {
          id: 'a',
          type: 'function',
          function: { name: 'memory_write', arguments: '{"name":"topics/x","description":"X","new":"x"}' },
        },
        { id: 'b', type: 'function', function: { name: 'memory_write', arguments: '[1, 2]' } },
        { id: 'c', type: 'function', function: { name: 'memory_open' } },
      ],
    });
    expect(messages.map((message) => message.content)).toEqual([
      'topics/x (2 bytes): X',
      expect.stringContaining('memory_write arguments must be an object, not an array'),
      'topics/x (2 bytes): X',
    ]);
    const history = await memory.recovery.history({ user: 'local', label: 'check' }, 'topics/x');
    expect(history.map((revision) => revision.actor)).toEqual(['agent']);
  });
});
