/**
 * The model's side of `engram chat`: any OpenAI-compatible endpoint (llama-server, vLLM,
 * Ollama's /v1, …) through node's fetch. Asks for a streamed chat completion, finds the
 * model when none is named (the first the endpoint lists), and turns every way a request
 * can fail — nothing listening, a refused key, an unknown model, silence — into one line.
 */

import { asSentence } from '../memory/model/text.js';
import { type AssistantReply, EndpointError, errorMessage, readCompletion, readEventStream } from './chat-stream.js';
import { UsageError } from './output.js';

export interface EndpointOptions {
  /** Where /chat/completions and /models are, e.g. http://127.0.0.1:8080/v1. */
  readonly baseUrl: string;
  /** Sent as a bearer token when given. */
  readonly apiKey?: string | undefined;
  /** The name of the variable the key came from, for the advice on a refused key. */
  readonly apiKeyEnv?: string | undefined;
  /** How long the endpoint may stay silent (before answering, or between two pieces). */
  readonly timeoutMs: number;
}

export interface CompletionRequest {
  readonly model: string;
  readonly messages: readonly unknown[];
  readonly tools: readonly unknown[];
}

export interface ChatEndpoint {
  readonly url: string;
  /** The first model the endpoint lists. */
  firstModel(): Promise<string>;
  /** One assistant message; `onText` gets the answer as it streams; `signal` stops it. */
  complete(request: CompletionRequest, onText: (text: string) => void, signal: AbortSignal): Promise<AssistantReply>;
}

/** Thrown when the person stopped the answer (Ctrl-C): not a failure of the endpoint. */
export class Stopped extends Error {}

function baseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--base-url ${raw} is not a URL: give one such as http://127.0.0.1:8080/v1`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--base-url must be an http:// or https:// URL, not ${url.protocol}`);
  }
  return url.href.replace(/\/+$/, '');
}

/** Resets on every sign of life; aborts once the endpoint was silent for `ms`. */
function silenceTimer(ms: number) {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const reset = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(), ms);
  };
  reset();
  return { signal: controller.signal, reset, stop: () => clearTimeout(timer) };
}

export function chatEndpoint(options: EndpointOptions): ChatEndpoint {
  const base = baseUrl(options.baseUrl);
  const seconds = Math.round(options.timeoutMs / 1000);

  function refused(url: string, status: number, statusText: string, body: string): EndpointError {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = { message: body };
    }
    const said = errorMessage(parsed);
    const answer = `${url} answered ${status}${statusText ? ` ${statusText}` : ''}${said ? `: ${said}` : ''}`;
    if (status === 401 || status === 403) {
      return new EndpointError(
        options.apiKeyEnv
          ? `${asSentence(answer)} Check the API key in $${options.apiKeyEnv}.`
          : `${asSentence(answer)} Give the API key with --api-key-env NAME (the variable that holds it).`,
      );
    }
    if (status === 404) {
      return new EndpointError(
        `${asSentence(answer)} Check --model, and that --base-url is the part before /chat/completions (for example http://127.0.0.1:8080/v1).`,
      );
    }
    return new EndpointError(answer);
  }

  async function request(path: string, init: RequestInit, signal: AbortSignal | undefined) {
    const url = `${base}${path}`;
    const silence = silenceTimer(options.timeoutMs);
    const signals = signal ? [silence.signal, signal] : [silence.signal];
    const headers: Record<string, string> = {
      accept: 'application/json, text/event-stream',
      ...(init.headers as object),
    };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    const failed = (error: unknown): Error => {
      if (signal?.aborted) return new Stopped('stopped');
      if (silence.signal.aborted) return new EndpointError(`${url} did not answer for ${seconds} s (--timeout)`);
      if (error instanceof EndpointError) return error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      if (cause?.code === 'ECONNREFUSED') {
        return new EndpointError(`cannot connect to ${new URL(url).host}: connection refused. Is the server running?`);
      }
      if (cause?.code === 'ENOTFOUND') return new EndpointError(`cannot find the host ${new URL(url).hostname}`);
      return new EndpointError(`cannot reach ${url}: ${cause?.message ?? (error as Error).message}`);
    };
    try {
      const response = await fetch(url, { ...init, headers, signal: AbortSignal.any(signals) });
      silence.reset();
      if (!response.ok)
        throw refused(url, response.status, response.statusText, (await response.text()).slice(0, 4096));
      return {
        response,
        /** Reads the body, the silence timer reset by each piece, failures worded. */
        async read<T>(reader: (body: AsyncIterable<Uint8Array>) => Promise<T>): Promise<T> {
          try {
            return await reader(
              (async function* () {
                for await (const piece of response.body ?? []) {
                  silence.reset();
                  yield piece;
                }
              })(),
            );
          } catch (error) {
            throw failed(error);
          } finally {
            silence.stop();
          }
        },
      };
    } catch (error) {
      silence.stop();
      throw failed(error);
    }
  }

  const text = async (body: AsyncIterable<Uint8Array>) => {
    const parts: Buffer[] = [];
    for await (const part of body) parts.push(Buffer.from(part));
    return Buffer.concat(parts).toString('utf8');
  };

  return {
    url: base,
    async firstModel() {
      const { read } = await request('/models', { method: 'GET' }, undefined);
      const listed = await read(text);
      let models: unknown;
      try {
        models = (JSON.parse(listed) as { data?: unknown }).data;
      } catch {
        throw new EndpointError(`${base}/models did not answer with JSON: give the model with --model`);
      }
      const first = Array.isArray(models) ? (models[0] as { id?: unknown } | undefined)?.id : undefined;
      if (typeof first !== 'string') throw new EndpointError(`${base}/models lists no model: give one with --model`);
      return first;
    },
    async complete(completion, onText, signal) {
      const { response, read } = await request(
        '/chat/completions',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...completion, stream: true }),
        },
        signal,
      );
      if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
        return read((body) => readEventStream(body, onText));
      }
      return read(async (body) => readCompletion(await text(body), onText));
    },
  };
}
