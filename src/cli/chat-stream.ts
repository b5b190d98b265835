/**
 * An assistant message from a chat completions reply, as `engram chat` reads it: a
 * server-sent event stream (`stream: true`: `data:` lines of chunks, `delta.content`
 * shown as it comes, `delta.tool_calls` put together by index, up to `data: [DONE]`), or
 * a whole JSON reply from a server that does not stream. What a server gets wrong is
 * an EndpointError, one line for the person at the terminal.
 */

import type { OpenAiToolCall } from '../adapters/openai.js';

/** A failure of the model's endpoint, worded for the person running `engram chat`. */
export class EndpointError extends Error {}

export interface AssistantReply {
  /** The text of the answer ("" when the model only called tools). */
  readonly content: string;
  readonly toolCalls: OpenAiToolCall[];
}

interface Delta {
  readonly content?: string | null;
  readonly tool_calls?: readonly {
    readonly index?: number;
    readonly id?: string;
    readonly type?: string;
    readonly function?: { readonly name?: string; readonly arguments?: string };
  }[];
}

interface Chunk {
  readonly choices?: readonly { readonly delta?: Delta; readonly message?: Delta }[];
  readonly error?: unknown;
}

/** The message of an error body as servers send them: {error: {message}}, {error: "…"}, {message}, {detail}. */
export function errorMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { error, message, detail } = body as Record<string, unknown>;
  const found =
    typeof error === 'object' && error !== null
      ? (error as Record<string, unknown>).message
      : (error ?? message ?? detail);
  return typeof found === 'string' && found.trim() !== '' ? found.replace(/\s+/g, ' ').trim().slice(0, 300) : undefined;
}

class Assembler {
  content = '';
  readonly calls: { id: string; type: string; name: string; arguments: string }[] = [];

  constructor(private readonly onText: (text: string) => void) {}

  add(delta: Delta | undefined): void {
    if (typeof delta?.content === 'string' && delta.content !== '') {
      this.content += delta.content;
      this.onText(delta.content);
    }
    for (const [position, part] of (delta?.tool_calls ?? []).entries()) {
      const index = part.index ?? position;
      this.calls[index] ??= { id: '', type: 'function', name: '', arguments: '' };
      const call = this.calls[index];
      if (part.id) call.id = part.id;
      if (part.type) call.type = part.type;
      if (part.function?.name) call.name = part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
    }
  }

  reply(): AssistantReply {
    const toolCalls = this.calls
      .filter((call) => call !== undefined)
      .map((call, index) => ({
        // A server that gives no id still gets one, so each tool message answers its call.
        id: call.id || `call_${index}`,
        type: call.type,
        function: { name: call.name, arguments: call.arguments },
      }));
    return { content: this.content, toolCalls };
  }
}

function parseChunk(data: string): Chunk {
  try {
    return JSON.parse(data) as Chunk;
  } catch {
    throw new EndpointError(`the endpoint sent an event that is not JSON: ${data.slice(0, 80)}`);
  }
}

function take(assembler: Assembler, chunk: Chunk, key: 'delta' | 'message'): void {
  const message = errorMessage(chunk);
  if (chunk.error !== undefined) throw new EndpointError(`the endpoint reported an error: ${message ?? 'no message'}`);
  assembler.add(chunk.choices?.[0]?.[key]);
}

/** Reads an event stream of chat completion chunks, calling `onText` with each piece of the answer. */
export async function readEventStream(
  body: AsyncIterable<Uint8Array>,
  onText: (text: string) => void,
): Promise<AssistantReply> {
  const assembler = new Assembler(onText);
  const decoder = new TextDecoder();
  let pending = '';
  const line = (text: string): boolean => {
    if (!text.startsWith('data:')) return false; // comments, event names, blank lines between events
    const data = text.slice(5).trim();
    if (data === '[DONE]') return true;
    take(assembler, parseChunk(data), 'delta');
    return false;
  };
  for await (const bytes of body) {
    pending += decoder.decode(bytes, { stream: true });
    const lines = pending.split(/\r?\n/);
    pending = lines.pop() ?? '';
    for (const text of lines) if (line(text)) return assembler.reply();
  }
  line(pending + decoder.decode());
  return assembler.reply();
}

/** Reads a whole (not streamed) chat completion, calling `onText` once with the answer. */
export function readCompletion(text: string, onText: (text: string) => void): AssistantReply {
  const assembler = new Assembler(onText);
  take(assembler, parseChunk(text), 'message');
  return assembler.reply();
}
