/**
 * `engram chat` as a person or a script runs it: the built executable, prompts piped in
 * one a line, against a scripted OpenAI-compatible endpoint replaying recorded streamed
 * turns (llama-server's wire format). The model writes a memory and answers; the next
 * prompt reads it back; the memory holds it afterwards; each call is shown as it runs;
 * and an endpoint that cannot be reached, refuses the key or knows no such model is one
 * clear line and exit code 1. The arguments refused before a chat starts (exit code 2),
 * and the other command run here, go through main() in this process.
 */

import { createServer, type Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { childEnv, queryDatabase, runEngram, tempDir } from '../helpers/engram.js';
import { jsonReply, type ScriptedReply, scriptedEndpoint, streamReply } from '../helpers/scripted-endpoint.js';
import { runInProcess } from './fixtures.js';

const fixture = (name: string) => new URL(`./chat-fixtures/${name}`, import.meta.url);

function setup() {
  const dir = tempDir();
  const db = dir.file('memory.db');
  const env = childEnv(dir.path, { ENGRAM_DB: db, TEST_LLM_KEY: 'sk-test-123' });
  return {
    db,
    /** `engram chat` as a child process, `input` piped to its stdin. */
    chat: (input: string, ...args: string[]) => runEngram(['chat', ...args], env, input),
    /**
     * main() in this process (a spawn costs some 0.3 s of CPU): for another command, or a
     * chat refused for its arguments before it reads stdin.
     */
    engram: (...args: string[]) => runInProcess(args, env),
  };
}

/** A port nothing listens on: taken, then given back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface SentMessage {
  readonly role: string;
  readonly content?: string | null;
  readonly tool_call_id?: string;
  readonly tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

describe('engram chat', () => {
  it('streams the answers, runs and shows the memory calls, and the memory keeps what was written', async () => {
    const endpoint = await scriptedEndpoint([
      jsonReply(fixture('models.json')),
      streamReply(fixture('write-tea.sse')),
      streamReply(fixture('answer-noted.sse')),
      streamReply(fixture('open-tea.sse')),
      streamReply(fixture('answer-tea.sse')),
    ]);
    const { chat, engram, db } = setup();

    const run = await chat(
      'I drink green tea, no sugar.\n\nWhat do I drink?\n',
      '--base-url',
      `${endpoint.url}/v1`,
      '--api-key-env',
      'TEST_LLM_KEY',
    );

    expect(run.stdout).toBe('Noted! Green tea, no sugar.\nYou drink green tea without sugar.\n');
    expect(run.stderr).toContain(`engram chat: qwen3-8b at ${endpoint.url}/v1`);
    expect(run.stderr).toContain('⟡ memory_write topics/tea … ok\n');
    expect(run.stderr).toContain('⟡ memory_open topics/tea … ok\n');
    expect(run.code).toBe(0);

    // No --model: the first model the endpoint lists; then streamed completions with the tools and the key.
    expect(endpoint.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'GET /v1/models',
      ...Array(4).fill('POST /v1/chat/completions'),
    ]);
    expect(endpoint.requests.every((request) => request.headers.authorization === 'Bearer sk-test-123')).toBe(true);
    const first = endpoint.body<{ model: string; stream: boolean; tools: { function: { name: string } }[] }>(1);
    expect([first.model, first.stream, first.tools.map((tool) => tool.function.name)]).toEqual([
      'qwen3-8b',
      true,
      ['memory_open', 'memory_write', 'memory_drop'],
    ]);
    // The tool calls, put together from their streamed pieces, and their answers went back.
    const second = endpoint.body<{ messages: SentMessage[] }>(2).messages;
    expect(second.slice(1).map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(second[2]?.tool_calls?.[0]?.function).toEqual({
      name: 'memory_write',
      arguments: '{"name": "topics/tea", "description": "How the user takes their tea", "new": "Green tea, no sugar."}',
    });
    expect(second[3]).toEqual({
      role: 'tool',
      tool_call_id: 'HKa1sV2mN8qWcY4tRz7LbX0uPe3fJd6g',
      content: 'topics/tea (21 bytes): How the user takes their tea',
    });
    // The second prompt carries the whole conversation, and the model read the entry back.
    const last = endpoint.body<{ messages: SentMessage[] }>(4).messages;
    expect(last.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
      'tool',
    ]);
    expect(last[7]?.content).toContain('Green tea, no sugar.');

    const opened = await engram('open', 'topics/tea');
    expect(opened.stdout).toContain('Green tea, no sugar.');
    expect(queryDatabase<{ actor: string }>(db, 'SELECT actor FROM revisions')).toEqual([{ actor: 'chat:qwen3-8b' }]);
  });

  it('stops a turn whose model keeps calling tools after --max-tool-rounds', async () => {
    const endpoint = await scriptedEndpoint([
      streamReply(fixture('open-tea.sse')),
      streamReply(fixture('open-tea.sse')),
    ]);
    const { chat } = setup();
    const run = await chat('Hi\n', '--base-url', endpoint.url, '--model', 'qwen3-8b', '--max-tool-rounds', '1');
    expect(run.stderr).toContain('⟡ memory_open topics/tea … NOT_FOUND');
    expect(run.stderr).toContain(
      'engram chat: stopped: the model was still calling tools after 1 round of memory calls',
    );
    expect(endpoint.requests).toHaveLength(2);
    expect(run.code).toBe(0);
  });

  it('takes a whole JSON reply from a server that does not stream', async () => {
    const endpoint = await scriptedEndpoint([
      jsonReply(new URL('../adapters/fixtures/openai-answer.json', import.meta.url)),
    ]);
    const run = await setup().chat('Weather?\n', '--base-url', endpoint.url, '--model', 'gpt-4.1');
    expect(run.stdout).toBe('Noted: green tea, no sugar, at about 80 °C. It is sunny in Lisbon today.\n');
    expect(run.code).toBe(0);
  });

  describe('says in one line why the endpoint failed', () => {
    async function failing(reply: ScriptedReply, ...args: string[]) {
      const endpoint = await scriptedEndpoint([reply]);
      const run = await setup().chat('Hello\n', '--base-url', `${endpoint.url}/v1`, ...args);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      return run.stderr.trim().split('\n').at(-1);
    }

    it('nothing listening', async () => {
      const port = await closedPort();
      const run = await setup().chat('Hello\n', '--base-url', `http://127.0.0.1:${port}/v1`, '--model', 'm');
      expect(run.code).toBe(1);
      expect(run.stderr.trim().split('\n').at(-1)).toBe(
        `engram: cannot connect to 127.0.0.1:${port}: connection refused. Is the server running?`,
      );
    });

    it('an endpoint that stays silent past --timeout', async () => {
      // Takes the connection and never answers.
      const sockets: Socket[] = [];
      const silent = createServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      onTestFinished(() => {
        for (const socket of sockets) socket.destroy();
        silent.close();
      });
      const { port } = silent.address() as { port: number };
      const base = `http://127.0.0.1:${port}/v1`;
      const run = await setup().chat('Hello\n', '--base-url', base, '--model', 'm', '--timeout', '1');
      expect(run.code).toBe(1);
      expect(run.stderr.trim().split('\n').at(-1)).toBe(
        `engram: ${base}/chat/completions did not answer for 1 s (--timeout)`,
      );
    });

    it('a refused key', async () => {
      const line = await failing(
        {
          status: 401,
          headers: { 'content-type': 'application/json; charset=utf-8' },
          body: '{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}',
        },
        '--model',
        'qwen3-8b',
      );
      expect(line).toMatch(
        /^engram: http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions answered 401 Unauthorized: Invalid API Key\. Give the API key with --api-key-env NAME/,
      );
    });

    it('a refusal whose message ends with a full stop, as OpenAI’s do: one full stop, not two', async () => {
      const line = await failing(
        {
          status: 401,
          headers: { 'content-type': 'application/json' },
          body: '{"error":{"message":"Incorrect API key provided: sk-xx. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error"}}',
        },
        '--model',
        'gpt-x',
      );
      expect(line).toMatch(/account\/api-keys\. Give the API key with --api-key-env NAME/);
      expect(line).not.toContain('..');
    });

    it('an unknown model', async () => {
      const line = await failing(
        {
          status: 404,
          headers: { 'content-type': 'application/json' },
          body: '{"error":{"message":"model \\"llama9\\" not found, try pulling it first","type":"api_error","param":null,"code":null}}',
        },
        '--model',
        'llama9',
      );
      expect(line).toMatch(/answered 404 Not Found: model "llama9" not found, try pulling it first\. Check --model/);
    });

    it('a stream that reports an error', async () => {
      const line = await failing(
        {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          chunks: ['data: {"error":{"code":500,"message":"context size exceeded","type":"server_error"}}\n\n'],
        },
        '--model',
        'qwen3-8b',
      );
      expect(line).toBe('engram: the endpoint reported an error: context size exceeded');
    });
  });

  it('refuses a --base-url that is not an http URL as a usage error', async () => {
    const run = await setup().engram('chat', '--base-url', 'localhost:8080');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--base-url must be an http:// or https:// URL');
  });

  it('refuses --json as a usage error: a chat has no JSON output', async () => {
    const run = await setup().engram('chat', '--base-url', 'http://127.0.0.1:9', '--json');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('drop --json');
  });
});
