/**
 * The tools for the Vercel AI SDK, run by the real `ai` package's generateText against
 * a scripted OpenAI-compatible endpoint (through @ai-sdk/openai-compatible) replaying
 * recorded turns: the model's write lands in the memory, a refusal reaches the model as
 * error text, and the app sees each whole result.
 */

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs } from 'ai';
import { describe, expect, it } from 'vitest';
import { aiSdkTools } from '../../src/adapters/vercel-ai.js';
import { createMemory, openAiTools, openMemoryStore } from '../../src/index.js';
import { jsonReply, scriptedEndpoint } from '../helpers/scripted-endpoint.js';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url);

interface SentMessage {
  readonly role: string;
  readonly tool_call_id?: string;
  readonly content?: string;
}

describe('aiSdkTools', () => {
  it('lets generateText write to the memory and tell the model of a refusal', async () => {
    const endpoint = await scriptedEndpoint([
      jsonReply(fixture('openai-write-and-drop.json')),
      jsonReply(fixture('openai-write-and-drop-answer.json')),
    ]);
    const memory = createMemory({ store: openMemoryStore() });
    const provider = createOpenAICompatible({ name: 'scripted', baseURL: `${endpoint.url}/v1` });

    const result = await generateText({
      model: provider('gpt-4.1-mini'),
      tools: aiSdkTools(memory, { caller: { user: 'local', label: 'ai-sdk' } }),
      stopWhen: stepCountIs(4),
      prompt: 'Ada prefers small commits. And forget what you know about Bob.',
    });

    expect(result.text).toBe("I saved Ada's preference. There was nothing about Bob to forget.");
    // The tools went out as the spec defines them.
    const tools = endpoint.body<{ tools: { function: { name: string; parameters: unknown } }[] }>(0).tools;
    expect(tools.map((tool) => [tool.function.name, tool.function.parameters])).toEqual(
      openAiTools().map((tool) => [tool.function.name, tool.function.parameters]),
    );
    // The app sees each whole result; the model got the texts back.
    expect(result.steps[0]?.toolResults.map((part) => part.output)).toEqual([
      { text: "people/ada (23 bytes): Ada, who reviews the user's pull requests", isError: false },
      { text: expect.stringContaining('people/bob'), isError: true, code: 'NOT_FOUND' },
    ]);
    const sent = endpoint.body<{ messages: SentMessage[] }>(1).messages.filter((message) => message.role === 'tool');
    expect(sent.map((message) => message.tool_call_id)).toEqual([
      'call_Xy1Zw2Vu3Ts4Rq5Po6Nm7Lk8',
      'call_Jh9Gf8Ed7Cb6Az5Yx4Wv3Ut2',
    ]);
    expect(sent[0]?.content).toBe("people/ada (23 bytes): Ada, who reviews the user's pull requests");
    expect(sent[1]?.content).toContain('people/bob');

    const caller = { user: 'local', label: 'check' };
    expect((await memory.open(caller, ['people/ada'])).found[0]?.body).toBe('Prefers small commits.\n');
    expect((await memory.recovery.history(caller, 'people/ada')).map((revision) => revision.actor)).toEqual(['ai-sdk']);
  });
});
