/**
 * A model endpoint for tests: a local HTTP server (port 0) that replays recorded
 * replies in order — a JSON body, or a server-sent event stream written a chunk at a
 * time — and keeps every request it got, so a test can check what the agent loop sent
 * back (the tool messages). Closed when the test ends.
 */

import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

export interface ScriptedReply {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** The body, written at once. */
  readonly body?: string;
  /** Or the body in pieces, each written on its own (an event stream as a server sends it). */
  readonly chunks?: readonly string[];
}

export interface ScriptedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The JSON body, parsed (undefined when there was none). */
  readonly body: unknown;
}

export interface ScriptedEndpoint {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly requests: ScriptedRequest[];
  /** The JSON body of request `index` (from 0), as the test expects it to be; throws if there was none. */
  body<T>(index: number): T;
}

/** A recorded JSON reply, from a file beside the test. */
export function jsonReply(file: URL, status = 200): ScriptedReply {
  return { status, headers: { 'content-type': 'application/json' }, body: readFileSync(file, 'utf8') };
}

/**
 * A recorded event stream, from a file of `data:` lines beside the test, written a half
 * event at a time (a chunk boundary inside an event, as proxies and slow servers make them).
 */
export function streamReply(file: URL): ScriptedReply {
  const events = readFileSync(file, 'utf8').split(/(?<=\n\n)/);
  const chunks = events.flatMap((event) => {
    const middle = Math.floor(event.length / 2);
    return [event.slice(0, middle), event.slice(middle)];
  });
  return { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, chunks };
}

/** Serves `replies` in order; a request past the last one is answered 500, so a test sees it. */
export async function scriptedEndpoint(replies: readonly ScriptedReply[]): Promise<ScriptedEndpoint> {
  const requests: ScriptedRequest[] = [];
  const server = createServer(async (request, response) => {
    const parts: Buffer[] = [];
    for await (const part of request) parts.push(part as Buffer);
    const text = Buffer.concat(parts).toString('utf8');
    requests.push({
      method: request.method ?? '',
      path: request.url ?? '',
      headers: request.headers,
      body: text === '' ? undefined : JSON.parse(text),
    });
    const reply = replies[requests.length - 1] ?? {
      status: 500,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: { message: `scripted endpoint: no reply for request ${requests.length}` } }),
    };
    response.writeHead(reply.status ?? 200, reply.headers ?? {});
    for (const chunk of reply.chunks ?? [reply.body ?? '']) {
      if (!response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve));
      // Each piece in its own tick, so the client reads them apart.
      await new Promise((resolve) => setImmediate(resolve));
    }
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    body<T>(index: number): T {
      const request = requests[index];
      if (request?.body === undefined) throw new Error(`the scripted endpoint got no request ${index} with a body`);
      return request.body as T;
    },
  };
}
