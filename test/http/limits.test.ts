/**
 * Bad input never crashes the server or changes memory: a body over the cap is refused
 * with 413 without being read to the end, malformed JSON is a 400 parse error, unknown
 * methods and tools are JSON-RPC errors, GET/DELETE answer 405, slow clients are cut
 * off — and after all of it the server still answers.
 */

import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { JSON_HEADERS, postRpc, raw, rpc, rpcMessage, startTestServer, type TestServer } from './fixtures.js';

const LOCAL = { user: 'local', label: 'test' };
const MIB = 1024 * 1024;

/** Sends the headers and `sent` bytes of a POST, then waits for the answer without sending the rest. */
function partialPost(server: TestServer, headers: Record<string, string | number>, sent: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/mcp', headers }, (res) => {
      let body = '';
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.write(sent);
  });
}

async function stillServes(server: TestServer): Promise<void> {
  const response = await postRpc(server.port, rpc('tools/list'));
  expect(response.status).toBe(200);
}

describe('request body cap (1 MiB)', () => {
  it('refuses a declared 100 MiB body with 413 at once, without waiting for it', async () => {
    const server = await startTestServer();
    const response = await partialPost(server, { ...JSON_HEADERS, 'Content-Length': 100 * MIB }, '{"jsonrpc":');
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).error.message).toBe(
      `Request body too large: the limit is ${MIB} bytes. Send smaller writes; an entry holds at most a few KiB.`,
    );
    await stillServes(server);
  });

  it('refuses a client that asks first (Expect: 100-continue) before it sends the body', async () => {
    const server = await startTestServer();
    const answer = await new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
      let continued = false;
      const req = httpRequest({
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: '/mcp',
        headers: { ...JSON_HEADERS, 'Content-Length': 2 * MIB, Expect: '100-continue' },
      });
      req.on('continue', () => {
        continued = true;
      });
      req.on('response', (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, continued });
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(answer).toEqual({ status: 413, continued: false });
  });

  it('refuses a chunked body as soon as it passes the cap', async () => {
    const server = await startTestServer();
    const response = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: server.port, method: 'POST', path: '/mcp', headers: JSON_HEADERS },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      const chunk = 'x'.repeat(64 * 1024);
      for (let sent = 0; sent <= MIB; sent += chunk.length) req.write(chunk);
    });
    expect(response).toBe(413);
    await stillServes(server);
  });

  it('reads a body of exactly the cap and refuses one byte more', async () => {
    const body = rpc('tools/call', {
      name: 'memory_write',
      arguments: { name: 'topics/a', description: 'A', new: 'x' },
    });
    const exact = await startTestServer({ maxBodyBytes: body.length });
    expect((await postRpc(exact.port, body)).status).toBe(200);
    const under = await startTestServer({ maxBodyBytes: body.length - 1 });
    expect((await postRpc(under.port, body)).status).toBe(413);
    expect(await under.memory.index(LOCAL)).toEqual([]);
  });
});

describe('malformed requests', () => {
  it.each(['{"jsonrpc":"2.0","id":1,', '', 'not json at all'])(
    'answers the body %j with a 400 parse error',
    async (body) => {
      const server = await startTestServer();
      const response = await postRpc(server.port, body);
      expect(response.status).toBe(400);
      expect(rpcMessage(response)).toEqual({
        jsonrpc: '2.0',
        error: { code: -32700, message: 'Parse error: the request body is not valid JSON.' },
        id: null,
      });
      await stillServes(server);
    },
  );

  it('answers an unknown JSON-RPC method with a JSON-RPC error', async () => {
    const server = await startTestServer();
    const response = await postRpc(server.port, rpc('memory/steal', {}, 7));
    expect(rpcMessage(response)).toMatchObject({ id: 7, error: { code: -32601 } });
  });

  it('answers an unknown tool with a JSON-RPC error naming the tools', async () => {
    const server = await startTestServer();
    const response = await postRpc(server.port, rpc('tools/call', { name: 'memory_steal', arguments: {} }));
    expect(rpcMessage(response).error?.message).toContain(
      'Unknown tool "memory_steal". The tools are memory_open, memory_write, memory_drop.',
    );
  });

  it('answers a body that is JSON but not JSON-RPC with an error, and changes nothing', async () => {
    const server = await startTestServer();
    for (const body of ['42', '[]', '{"name":"topics/x"}', 'null']) {
      const response = await postRpc(server.port, body);
      expect(response.status).toBeGreaterThanOrEqual(400);
    }
    expect(await server.memory.index(LOCAL)).toEqual([]);
    await stillServes(server);
  });

  it('answers a non-JSON content type with 415', async () => {
    const server = await startTestServer();
    const response = await postRpc(server.port, rpc('tools/list'), { 'Content-Type': 'text/plain' });
    expect(response.status).toBe(415);
  });
});

describe('methods and paths', () => {
  it.each(['GET', 'DELETE', 'PUT'])('answers %s /mcp with 405 and Allow: POST, OPTIONS', async (method) => {
    const server = await startTestServer();
    const response = await raw(server.port, { method, headers: { Accept: 'text/event-stream' } });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('POST, OPTIONS');
    expect(rpcMessage(response).error?.message).toBe(
      'Method not allowed: this server is stateless, send each MCP request as a POST.',
    );
  });

  it('answers GET /healthz with 200 and unknown paths with 404', async () => {
    const server = await startTestServer();
    const health = await raw(server.port, { path: '/healthz' });
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
    expect((await raw(server.port, { method: 'POST', path: '/healthz' })).status).toBe(405);
    const missing = await raw(server.port, { path: '/nope?x=1' });
    expect(missing.status).toBe(404);
    expect(rpcMessage(missing).error?.message).toBe(
      'Not found: /nope. Engram serves MCP at /mcp, its REST API under /api and its health at /healthz and /readyz.',
    );
  });
});

describe('slow and broken clients', () => {
  const SHORT = { headersMs: 200, requestMs: 300, checkIntervalMs: 50 };

  it('cuts off a client that sends its headers and never its body', async () => {
    const server = await startTestServer({ timeouts: SHORT });
    const socket = connect(server.port, '127.0.0.1');
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"`,
    );
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    await new Promise((resolve) => socket.on('close', resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    await stillServes(server);
  });

  it('cuts off a client that never finishes its headers', async () => {
    const server = await startTestServer({ timeouts: SHORT });
    const socket = connect(server.port, '127.0.0.1');
    socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    socket.resume();
    await new Promise((resolve) => socket.on('close', resolve));
    await stillServes(server);
  });

  it('answers garbage that is not HTTP with 400 and keeps serving', async () => {
    const server = await startTestServer();
    const socket = connect(server.port, '127.0.0.1');
    socket.write('\x16\x03\x01 definitely not http\r\n\r\n');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    await new Promise((resolve) => socket.on('close', resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    await stillServes(server);
  });

  it('survives a client that disconnects halfway through its body', async () => {
    const server = await startTestServer();
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((resolve) =>
      socket.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"`,
        resolve,
      ),
    );
    socket.destroy();
    await vi.waitFor(() => expect(server.logs.some((line) => line.includes('status=499'))).toBe(true));
    expect(server.logs.join('\n')).not.toContain('internal error');
    await stillServes(server);
    expect(await server.memory.index(LOCAL)).toEqual([]);
  });
});

describe('a body read whole from the buffer or as it comes', () => {
  const write = (name: string, text: string, id: number) =>
    rpc('tools/call', { name: 'memory_write', arguments: { name, description: 'A', new: text } }, id);
  const post = (body: string, close = false) =>
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `${close ? 'Connection: close\r\n' : ''}\r\n`;

  /** Writes each piece in turn, a pause between, and collects what comes back until the server hangs up. */
  function exchange(server: TestServer, pieces: readonly Buffer[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1');
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        text += chunk;
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(text));
      void (async () => {
        for (const piece of pieces) {
          socket.write(piece);
          await new Promise((wait) => setTimeout(wait, 30));
        }
      })();
    });
  }

  it('is the same text when it comes in pieces that split a character', async () => {
    const server = await startTestServer();
    const body = Buffer.from(write('topics/a', 'Grüße, 日本', 1));
    const split = body.indexOf(Buffer.from('日')) + 1;
    const answer = await exchange(server, [
      Buffer.from(post(body.toString(), true)),
      body.subarray(0, split),
      body.subarray(split),
    ]);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect((await server.memory.open(LOCAL, ['topics/a'])).found[0]?.body).toBe('Grüße, 日本\n');
  });

  it('serves requests sent together on one connection, each body read from the buffer', async () => {
    const server = await startTestServer();
    const [first, second] = [write('topics/a', 'one', 1), write('topics/b', 'zwei, 二', 2)];
    const answer = await exchange(server, [Buffer.from(post(first) + first + post(second, true) + second)]);
    expect(answer.split('HTTP/1.1 200')).toHaveLength(3);
    const opened = await server.memory.open(LOCAL, ['topics/a', 'topics/b']);
    expect(opened.found.map((entry) => entry.body)).toEqual(['one\n', 'zwei, 二\n']);
    expect(server.logs.filter((line) => line.includes('POST /mcp') && line.includes('status=200'))).toHaveLength(2);
  });
});
