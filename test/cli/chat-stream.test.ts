/**
 * Reading a chat completion as `engram chat` does: a recorded llama-server event stream
 * cut into two pieces at every possible place (tool call arguments put together by
 * index, the answer's text passed on as it comes), an OpenAI-style stream of two tool
 * calls interleaved, a whole JSON reply from a server that does not stream, and the
 * failures a server can send.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EndpointError, readCompletion, readEventStream } from '../../src/cli/chat-stream.js';

const recorded = (name: string) => readFileSync(new URL(`./chat-fixtures/${name}`, import.meta.url));

async function* pieces(...parts: Uint8Array[]) {
  for (const part of parts) yield part;
}

async function read(...parts: Uint8Array[]) {
  const texts: string[] = [];
  const reply = await readEventStream(pieces(...parts), (text) => texts.push(text));
  return { reply, texts };
}

describe('readEventStream', () => {
  it('puts a streamed tool call together, wherever the stream is cut', async () => {
    const bytes = recorded('write-tea.sse');
    const expected = {
      content: '',
      toolCalls: [
        {
          id: 'HKa1sV2mN8qWcY4tRz7LbX0uPe3fJd6g',
          type: 'function',
          function: {
            name: 'memory_write',
            arguments:
              '{"name": "topics/tea", "description": "How the user takes their tea", "new": "Green tea, no sugar."}',
          },
        },
      ],
    };
    for (let cut = 0; cut <= bytes.length; cut += 1) {
      expect((await read(bytes.subarray(0, cut), bytes.subarray(cut))).reply).toEqual(expected);
    }
  });

  it('passes the answer on piece by piece', async () => {
    const { reply, texts } = await read(recorded('answer-tea.sse'));
    expect(texts).toEqual(['You', ' drink', ' green', ' tea', ' without', ' sugar', '.']);
    expect(reply).toEqual({ content: 'You drink green tea without sugar.', toolCalls: [] });
  });

  it('keeps two interleaved tool calls apart by index, with CRLF line ends and no [DONE]', async () => {
    const event = (toolCalls: unknown) =>
      `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: toolCalls } }] })}\r\n\r\n`;
    const stream = [
      ': keep-alive\r\n\r\n',
      event([{ index: 0, id: 'call_a', type: 'function', function: { name: 'memory_open', arguments: '' } }]),
      event([{ index: 1, id: 'call_b', type: 'function', function: { name: 'memory_drop', arguments: '{"na' } }]),
      event([{ index: 0, function: { arguments: '{}' } }]),
      event([{ index: 1, function: { arguments: 'me":"topics/x"}' } }]),
    ].join('');
    const { reply } = await read(new TextEncoder().encode(stream));
    expect(reply.toolCalls).toEqual([
      { id: 'call_a', type: 'function', function: { name: 'memory_open', arguments: '{}' } },
      { id: 'call_b', type: 'function', function: { name: 'memory_drop', arguments: '{"name":"topics/x"}' } },
    ]);
  });

  it('refuses an error event and an event that is not JSON', async () => {
    const error = 'data: {"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}\n\n';
    await expect(read(new TextEncoder().encode(error))).rejects.toThrow(
      new EndpointError('the endpoint reported an error: Loading model'),
    );
    await expect(read(new TextEncoder().encode('data: {"choices": [\n\n'))).rejects.toThrow(
      'the endpoint sent an event that is not JSON: {"choices": [',
    );
  });
});

describe('readCompletion', () => {
  it('reads a whole reply from a server that does not stream', () => {
    const texts: string[] = [];
    const body = readFileSync(new URL('../adapters/fixtures/openai-tool-calls.json', import.meta.url), 'utf8');
    const reply = readCompletion(body, (text) => texts.push(text));
    expect(reply.toolCalls.map((call) => [call.id, call.function?.name])).toEqual([
      ['call_Qm3Hn8vXk2LpR5tYw9Zb1cDe', 'memory_write'],
      ['call_Vt6Jk1sNw4QxM8pLz2Rf7gHa', 'get_weather'],
      ['call_Ab4Cd7Ef0Gh3Ij6Kl9Mn2OpQ', 'memory_open'],
    ]);
    expect(texts).toEqual([]);
  });
});
