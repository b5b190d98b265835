/**
 * What every client sees of Engram's resources, prompts and identity, whatever the
 * transport: run against a fresh, empty memory of one user through a connected client.
 * The resources are checked against the tools themselves: the index is what
 * memory_open() returns, an entry what memory_open([name]) returns.
 */

import { UriTemplate } from '@modelcontextprotocol/server';
import { expect } from 'vitest';
import type { ContextClient } from './context-clients.js';

/** A tool result's text. */
export async function toolText(client: ContextClient, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as { content: { text: string }[] };
  return result.content.map((block) => block.text).join('');
}

export async function readText(client: ContextClient, uri: string): Promise<string> {
  const { contents } = await client.readResource({ uri });
  expect(contents).toHaveLength(1);
  expect(contents[0]).toMatchObject({ uri, mimeType: 'text/markdown' });
  return contents[0]!.text ?? '';
}

/** The JSON-RPC error a refused request rejects with (the v1 client's McpError, the v2 client's ProtocolError). */
export async function refusal(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  const error = await request.then(
    () => expect.fail('the request was answered, not refused'),
    (reason: unknown) => reason as { code: number; message: string },
  );
  return { code: error.code, message: error.message };
}

export function expectIdentity(client: ContextClient): void {
  const info = client.getServerVersion();
  expect(info).toMatchObject({ name: 'engram', title: 'Engram' });
  const icon = info?.icons?.[0];
  expect(icon?.mimeType).toBe('image/svg+xml');
  expect(icon?.src).toMatch(/^data:image\/svg\+xml;base64,/);
  expect(Buffer.from(icon!.src.split(',')[1]!, 'base64').toString('utf8')).toMatch(/^<svg [\s\S]*<\/svg>$/);
  expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {}, completions: {} });
}

/** Lists and reads the index and entries of a memory that starts empty, writing through the tools. */
export async function expectResources(client: ContextClient): Promise<void> {
  expect((await client.listResources()).resources).toEqual([
    expect.objectContaining({ uri: 'memory://index', name: 'index', mimeType: 'text/markdown' }),
  ]);
  expect((await client.listResourceTemplates()).resourceTemplates).toEqual([
    expect.objectContaining({ uriTemplate: 'memory://entry/{name}', name: 'entry', mimeType: 'text/markdown' }),
  ]);

  expect(await readText(client, 'memory://index')).toBe(await toolText(client, 'memory_open'));
  await toolText(client, 'memory_write', {
    name: 'topics/tea',
    description: 'Tea — ünïcode 🍵',
    new: 'Green tea, no sugar; 100% sure.',
  });
  await toolText(client, 'memory_write', { name: 'people/ada', description: 'Ada', new: 'Writes Rust.' });
  const index = await readText(client, 'memory://index');
  expect(index).toBe(await toolText(client, 'memory_open'));
  expect(index).toBe('people/ada (13 bytes): Ada\ntopics/tea (32 bytes): Tea — ünïcode 🍵');

  // The SDK's own template expansion writes the name's / as %2F, and reads back.
  const uri = new UriTemplate('memory://entry/{name}').expand({ name: 'topics/tea' });
  expect(uri).toBe('memory://entry/topics%2Ftea');
  const entry = await readText(client, uri);
  expect(entry).toBe(await toolText(client, 'memory_open', { names: ['topics/tea'] }));
  expect(entry).toContain('topics/tea (32 bytes): Tea — ünïcode 🍵\nGreen tea, no sugar; 100% sure.\n');
  expect(await readText(client, 'memory://entry/topics/tea')).toBe(entry);
  expect(await readText(client, 'memory://entry/Topics%2FTea')).toBe(entry);

  // A name the memory lacks or refuses: what memory_open says of it, as an error.
  for (const name of ['topics/teas', 'people/zoë', 'topics/100%', 'topics/tea/cups']) {
    const told = await toolText(client, 'memory_open', { names: [name] });
    expect(
      await refusal(client.readResource({ uri: new UriTemplate('memory://entry/{name}').expand({ name }) })),
    ).toEqual({ code: -32602, message: expect.stringContaining(told) });
  }
  for (const wrong of ['memory://entry/topics%2', 'memory://elsewhere', 'file:///etc/passwd']) {
    expect(await refusal(client.readResource({ uri: wrong }))).toEqual({
      code: -32602,
      message: expect.stringContaining(`Unknown resource ${wrong}. The resources are memory://index and`),
    });
  }

  const names = (value: string) =>
    client.complete({ ref: { type: 'ref/resource', uri: 'memory://entry/{name}' }, argument: { name: 'name', value } });
  expect((await names('to')).completion).toMatchObject({ values: ['topics/tea'], total: 1, hasMore: false });
  expect((await names('ad')).completion.values).toEqual(['people/ada']);
  expect((await names('')).completion.values).toEqual(['people/ada', 'topics/tea']);
  const subjects = await client.complete({
    ref: { type: 'ref/prompt', name: 'recall' },
    argument: { name: 'subject', value: 'T' },
  });
  expect(subjects.completion.values).toEqual(['topics/tea']);
}

export async function expectPrompts(client: ContextClient): Promise<void> {
  const { prompts } = await client.listPrompts();
  expect(prompts.map((prompt) => [prompt.name, prompt.arguments])).toEqual([
    ['remember', [expect.objectContaining({ name: 'what', required: true, description: expect.any(String) })]],
    ['recall', [expect.objectContaining({ name: 'subject', required: true, description: expect.any(String) })]],
  ]);

  const remember = await client.getPrompt({ name: 'remember', arguments: { what: 'I take my tea green.' } });
  expect(remember.messages).toHaveLength(1);
  expect(remember.messages[0]!.role).toBe('user');
  const rememberText = remember.messages[0]!.content.text ?? '';
  expect(rememberText).toContain('I take my tea green.');
  expect(rememberText).toMatch(/memory_open with no arguments[\s\S]*memory_write/);

  const recall = await client.getPrompt({ name: 'recall', arguments: { subject: 'Ada' } });
  expect(recall.messages[0]!.content.text).toMatch(/about Ada\?[\s\S]*memory_open with no arguments[\s\S]*memory_open/);

  expect(await refusal(client.getPrompt({ name: 'remember' }))).toEqual({
    code: -32602,
    message: expect.stringContaining('The remember prompt needs its argument what: What to remember'),
  });
  expect(await refusal(client.getPrompt({ name: 'recall', arguments: { subject: '  ' } }))).toEqual({
    code: -32602,
    message: expect.stringContaining('The recall prompt needs its argument subject'),
  });
  expect(await refusal(client.getPrompt({ name: 'forget', arguments: {} }))).toEqual({
    code: -32602,
    message: expect.stringContaining('Unknown prompt "forget". The prompts are remember, recall.'),
  });
}
